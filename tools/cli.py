"""The tools' command lines, built one way so that every `tools/X.py --help` is real help: what the
tool does (its docstring's opening paragraph, or all of it), each option with its range and its
default, and an example, printed on stdout with exit status 0 (argparse's own behaviour; a
hand-rolled parser prints a usage line on stderr instead).

    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/X.py IN OUT"])
    ap.add_argument("--n", type=int, default=4, help="how many (1 or more)")   # -> "(default: 4)"

An option whose help already names its default, or whose default is None, False or empty, is shown
as written.
"""

import argparse


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """The docstring and examples as written (their line breaks matter), each option's default added."""

    def _get_help_string(self, action):
        text = action.help or ""
        d = action.default
        if not action.option_strings or "default" in text or d is None or d is False or d == [] \
                or d is argparse.SUPPRESS:
            return text
        return (text + " " if text else "") + "(default: %(default)s)"


def parser(doc, examples, full=False, **kw):
    """An ArgumentParser whose description is doc's first paragraph (all of doc with full) and whose
    help ends with the examples, one command a line."""
    text = (doc or "").strip()
    epilog = "example%s:\n%s" % ("s" if len(examples) > 1 else "", "\n".join("  " + e for e in examples))
    return argparse.ArgumentParser(description=text if full else text.split("\n\n")[0], epilog=epilog,
                                   formatter_class=_Formatter, **kw)
