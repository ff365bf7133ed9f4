#!/usr/bin/python3
"""Every tool in tools/ (each tools/*.py that runs as a program) answers --help with real help:
exit status 0, on stdout (nothing on stderr), a usage line, what it does, every option with a
help text, and an example; and a command line it cannot use exits 2 with the usage on stderr.
tools/ucd_from_npm.mjs too, when node is installed.
Modules without a main program (safetensors_io.py, cli.py, spec.py) are not tools.

    /usr/bin/python3 tests/convert/test_tools_help.py
"""

import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

TOOLS = os.path.join(common.ROOT, "tools")
# tools/export.py's help has no example yet (its owner adds one); checked to be still missing, so
# that this exemption goes when the example comes
NO_EXAMPLE_YET = {"export.py"}


def tools():
    out = []
    for path in sorted(glob.glob(os.path.join(TOOLS, "*.py"))):
        with open(path, encoding="utf-8") as f:
            if re.search(r'^if __name__ == "__main__":', f.read(), re.M):
                out.append(path)
    return out


def options_without_help(text):
    """The options of an argparse help listing that have no help text: an option line ('  -x ...' or
    '  --name ...') with nothing after its invocation and no indented text on the next line."""
    lines = text.splitlines()
    missing = []
    for i, line in enumerate(lines):
        m = re.match(r"^  (-\S+(?: \S+)*?)(\s{2,}\S.*)?$", line)
        if not m or m.group(2):
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not re.match(r"^ {8,}\S", nxt):
            missing.append(m.group(1))
    return missing


def main():
    rep = common.Report("tools_help")
    found = tools()
    names = [os.path.basename(p) for p in found]
    rep.check("the tools are found", "convert.py" in names and "quantize.py" in names and len(found) >= 15,
              ", ".join(names))
    for path in found:
        name = os.path.basename(path)
        p = subprocess.run([common.PY, path, "--help"], capture_output=True, text=True, timeout=60, cwd=TOOLS)
        out = p.stdout
        rep.check("%s --help exits 0 with nothing on stderr" % name, p.returncode == 0 and p.stderr == "",
                  "rc %d: %s" % (p.returncode, p.stderr.strip()[-300:]))
        rep.check("%s --help: usage first, what it does" % name,
                  re.match(r"usage: (tools/)?%s " % re.escape(name), out) is not None and len(out.splitlines()) >= 8,
                  out[:200])
        example = re.search(r"^examples?:$", out, re.M) is not None
        if name in NO_EXAMPLE_YET:
            rep.check("%s --help: no example yet (remove it from NO_EXAMPLE_YET when it has one)" % name,
                      not example)
        else:
            rep.check("%s --help: an example" % name, example, out[-200:])
        missing = options_without_help(out)
        rep.check("%s --help: every option has a help text" % name, not missing, ", ".join(missing))
    # the one tool in JavaScript (node), answering --help the same way
    node = shutil.which("node")
    if node:
        p = subprocess.run([node, os.path.join(TOOLS, "ucd_from_npm.mjs"), "--help"], capture_output=True, text=True,
                           timeout=60)
        rep.check("ucd_from_npm.mjs --help: exit 0, usage, an example on stdout",
                  p.returncode == 0 and p.stderr == "" and p.stdout.startswith("usage: node tools/ucd_from_npm.mjs ")
                  and "\nexample:\n" in p.stdout, "rc %d: %s" % (p.returncode, (p.stderr or p.stdout)[:200]))
    else:
        print("  note: no node: ucd_from_npm.mjs --help not run")
    # a command line the tool cannot use: argparse's usage on stderr, exit 2, nothing written
    p = subprocess.run([common.PY, os.path.join(TOOLS, "quantize.py"), "only-one.safetensors"],
                       capture_output=True, text=True, timeout=60)
    rep.check("quantize.py with one file exits 2 naming what is missing",
              p.returncode == 2 and p.stdout == "" and p.stderr.startswith("usage: quantize.py ")
              and "the following arguments are required: OUT.safetensors" in p.stderr,
              "rc %d: %s" % (p.returncode, p.stderr.strip()))
    p = subprocess.run([common.PY, os.path.join(TOOLS, "quantize.py"), "--help"], capture_output=True, text=True,
                       timeout=60)
    rep.check("quantize.py --help names --q4 and both files", "--q4" in p.stdout and "IN.safetensors" in p.stdout
              and "OUT.safetensors" in p.stdout, p.stdout[:200])
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
