"""Plans as plain Python data, extracted from evaluated plan modules."""
