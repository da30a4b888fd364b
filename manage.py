#!/usr/bin/env python
"""Django's command-line utility for Lesson Pile Review."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A setup mistake (say, SECRET_KEY unset outside DEBUG) deserves a sentence, not a traceback.
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(2)
    except BrokenPipeError:
        # The reader went away (`manage.py piles | head`): stop quietly, as the exports do
        # (lessons/management/base.py, write_stream); the output flushed at exit goes nowhere.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    main()
