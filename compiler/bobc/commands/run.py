from ..errors import NotYetAvailable
from ._common import existing_file


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob)")
    p.add_argument("operation", choices=["train", "predict"])
    p.add_argument("--reference", action="store_true", required=True,
                   help="use the NumPy reference runner (the only runner `bobc run` has)")
    p.add_argument("--input", required=True, help="input record")
    p.add_argument("--checkpoint", help="checkpoint to resume from (fresh run when absent)")
    p.add_argument("--checkpoint-out", required=True, help="checkpoint to publish")
    p.add_argument("--predictions", required=True, help="predictions file to write")
    p.add_argument("--result", required=True, help="result record to write")


def run(args):
    existing_file(args.plan)
    raise NotYetAvailable("the reference runner is not part of this build yet")
