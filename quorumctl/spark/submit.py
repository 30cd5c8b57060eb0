"""The application file for `spark-submit`: the arguments are spark-export's.

    spark-submit --master yarn ... "$(python -m quorumctl.spark.submit --path)" \\
        hdfs:///kraft/archive --out hdfs:///exports/kraft

Under spark-submit the session (master, resources, configuration) is the one
spark-submit made; `--master` is ignored. `python -m quorumctl.spark.submit
--path` prints this file's path for the command line.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--path"]:
        from quorumctl.render.output import Printer

        Printer().write(__file__ + "\n")
        return
    from quorumctl.cli.main import main as cli_main

    sys.argv = ["quorumctl", "spark-export", *args]
    cli_main()


if __name__ == "__main__":
    main()
