"""One module per `bobc` subcommand: add_arguments(parser) and run(args)."""
