"""Run the shell blocks of README.md and of the section 7 pages as written
and check what they say.

Every indented block of the README, and every literal display (.Bd
-literal) of the pages named after it, is a block of commands unless it is a
sample of output (its first line is a tool's message, "kg-eval: ...", or
a diagram with "->").  The commands run in order, in one bash session (a
variable set in one line is seen by the next), in the current directory,
which readme.sh has made to look like the repository's top (bin/,
build/aux/ and examples/ are links).  `make ...` lines are not run.

Each command must exit 0 and write what it names: the -o directory of a
tool (or kg-train's model directory) with its manifest.json, kg-eval's JSON
with an MRR (and an AUC with --auc), kg_gen_enterprise's files, the python
line's array shape.  The UMLS table in the README must match the MRR the
pipeline gives (within 0.03).  Then the block of "Distributed training
and evaluation" runs a second time: its outputs exist by then, so the tools
must refuse them as the README says ("an existing output needs --force"),
exit non-zero and leave them as they were, while kg-eval gives the same
metrics again.  Last, no temporary is left behind, in work/ or in $TMPDIR.

usage: python3 readme.py README.md [PAGE.7 ...]
Environment: READMETEST_REWRITE="FROM=TO" rewrites an absolute path that
a block writes to (the ETL block's /data/kg) into the scratch directory;
READMETEST_NO_NUMPY=1 skips the lines that need numpy.
"""
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys

DIST_HEADING = "Distributed training and evaluation"
TOOLS_WITH_O = ("kg-ingest", "kg-partition", "kg-expand", "kg-encode-attrs")


# The number of checks follows the README's commands, so the plan ("1..N",
# TAP) comes last: main() prints it only when it ran to its end, and
# tests/run.sh fails a run without one (an exception half way, say).
checks = 0


def ok(msg):
    global checks
    checks += 1
    print("ok - readme: " + msg)


def notok(msg):
    global checks
    checks += 1
    print("not ok - readme: " + msg)


def skip(msg):
    global checks
    checks += 1
    print("ok - readme # SKIP " + msg)


def raw_blocks_md(path):
    """[(heading, [lines])] of a markdown file's indented blocks."""
    blocks, heading, cur = [], "", None
    for line in open(path, encoding="utf-8").read().splitlines():
        if line.startswith("    "):
            if cur is None:
                cur = (heading, [])
                blocks.append(cur)
            cur[1].append(line[4:])
        elif line.strip() == "":
            continue    # a blank line inside a block keeps it open
        else:
            cur = None
            if line.startswith("#"):
                heading = line.lstrip("#").strip()
    return blocks


def unescape_mdoc(line):
    """A literal line of an mdoc page as it renders."""
    if line.startswith("\\&"):
        line = line[2:]
    return line.replace("\\e", "\\").replace("\\-", "-")


def raw_blocks_mdoc(path):
    """[(heading, [lines])] of an mdoc page's literal displays (.Bd
    -literal ... .Ed) under their .Sh or .Ss headings."""
    page = os.path.basename(path)
    blocks, heading, cur = [], page, None
    for line in open(path, encoding="utf-8").read().splitlines():
        if cur is not None:
            if line.startswith(".Ed"):
                cur = None
            else:
                cur[1].append(unescape_mdoc(line))
        elif line.startswith((".Sh ", ".Ss ")):
            heading = "%s %s" % (page, line[4:].strip())
        elif line.startswith(".Bd") and "-literal" in line:
            cur = (heading, [])
            blocks.append(cur)
    return blocks


def blocks_of(path):
    """[(heading, [logical lines])] of the blocks of a README (markdown)
    or a man page (mdoc)."""
    raw = raw_blocks_mdoc(path) if re.search(r"\.[1-9]$", path) \
        else raw_blocks_md(path)
    out = []
    for heading, lines in raw:
        logical, part = [], ""
        for line in lines:
            if line.endswith("\\"):
                part += line[:-1]
            elif line.rstrip().endswith("|"):
                part += line + " "    # a pipeline goes on
            else:
                logical.append((part + line).strip())
                part = ""
        if part:
            logical.append(part.strip())
        out.append((heading, [x for x in logical
                              if x and not x.startswith("#")]))
    return out


def is_output(lines):
    """A sample of output or a diagram, not commands: a tool's message, a
    diagram, a tab-separated table or JSON lines."""
    first = lines[0]
    return (bool(re.match(r"^[\w.-]+: ", first)) or "->" in first or
            "\t" in first or first.startswith("{"))


def words(cmd):
    """The words of the last command of a pipeline, mpirun and its options
    dropped, redirection targets kept apart: (words, stdout file)."""
    try:
        toks = shlex.split(cmd, comments=True)
    except ValueError:
        return [], None
    while "|" in toks:
        toks = toks[toks.index("|") + 1:]
    out = None
    if ">" in toks:
        i = toks.index(">")
        out = toks[i + 1] if i + 1 < len(toks) else None
        toks = toks[:i]
    if toks and toks[0] == "mpirun":
        toks = toks[1:]
        while toks and toks[0].startswith("-"):
            toks = toks[2:] if toks[0] in ("-np", "-n", "--hostfile") \
                else toks[1:]
    return toks, out


def outputs(toks):
    """The directories a tool command writes."""
    if not toks:
        return []
    tool = os.path.basename(toks[0])
    if tool in TOOLS_WITH_O and "-o" in toks:
        return [toks[toks.index("-o") + 1]]
    if tool == "kg-train":
        pos = [t for t in toks[1:] if not t.startswith("-")]
        return [pos[-1]] if pos else []
    return []


def tree_sum(d):
    """A checksum of every file under d (names and bytes)."""
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(d)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(root, f)
            h.update(p.encode())
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def run_session(cmds, rewrite):
    """Run cmds in one bash session; [(rc, stdout, stderr)] per command."""
    script = ["set -o pipefail"]
    for i, cmd in enumerate(cmds):
        if rewrite:
            cmd = cmd.replace(rewrite[0], rewrite[1])
        script.append("{ %s\n} >.rd/out.%d 2>.rd/err.%d; echo $? >.rd/rc.%d"
                      % (cmd, i, i, i))
    os.makedirs(".rd", exist_ok=True)
    subprocess.run(["timeout", "600", "bash", "-c", "\n".join(script)],
                   stdin=subprocess.DEVNULL)
    res = []
    for i in range(len(cmds)):
        def read(name):
            try:
                return open(".rd/%s.%d" % (name, i), errors="replace").read()
            except OSError:
                return ""
        rc = read("rc").strip()
        res.append((int(rc) if rc else -1, read("out"), read("err")))
    return res


def first_json(text):
    """The first JSON document of text, or None."""
    try:
        return json.JSONDecoder().raw_decode(text.lstrip())[0]
    except ValueError:
        return None


def metrics_of(text):
    """The metrics of kg-eval's JSON (timings apart), or None."""
    j = first_json(text)
    return j.get("by_ties") if isinstance(j, dict) else None


def check_writes(cmd, toks, out_file, stdout, rewrite):
    """What the command says it writes; a message when it does not."""
    tool = os.path.basename(toks[0]) if toks else ""
    for d in outputs(toks):
        d = d.replace(rewrite[0], rewrite[1]) if rewrite else d
        if not os.path.isfile(os.path.join(d, "manifest.json")):
            return "%s has no manifest.json" % d
        if tool == "kg-train" and \
                not os.path.isfile(os.path.join(d, "entities.npy")):
            return "%s has no entities.npy" % d
    if tool == "kg_gen_enterprise" and "-o" in toks:
        d = toks[toks.index("-o") + 1]
        for f in ("train.tsv", "types.tsv", "schema.json"):
            if not os.path.isfile(os.path.join(d, f)):
                return "%s has no %s" % (d, f)
    if tool == "kg-eval":
        text = open(out_file).read() if out_file else stdout
        j = first_json(text)
        try:
            mrr = j["metrics"]["both"]["mrr"]
        except (TypeError, KeyError):
            return "no JSON with metrics.both.mrr on %s" % (
                out_file or "stdout")
        if not 0 < mrr <= 1:
            return "MRR %r" % mrr
        if "--auc" in toks and not 0.5 < j.get("auc", 0) <= 1:
            return "AUC %r" % j.get("auc")
    if tool in ("python3", "python") and \
            not re.search(r"^\(\d+, 3\)$", stdout, re.M):
        return "printed %r, not an array shape" % stdout.strip()
    return None


def first_pass(blocks, rewrite):
    """Run every command block; returns {command: stdout} of kg-eval."""
    cmds, where = [], []
    for heading, lines in blocks:
        if is_output(lines):
            print("# not commands (under '%s'): %s" % (heading, lines[0]))
            continue
        for cmd in lines:
            toks, _ = words(cmd)
            if toks and toks[0] == "make":
                skip("not run: %s" % cmd.split("#")[0].strip())
                continue
            if "numpy" in cmd and os.environ.get("READMETEST_NO_NUMPY"):
                skip("not run, numpy is not installed: %s" % cmd)
                continue
            cmds.append(cmd)
            where.append(heading)
    res = run_session(cmds, rewrite)
    evals = {}
    for cmd, heading, (rc, out, err) in zip(cmds, where, res):
        toks, out_file = words(cmd)
        name = "%s: %s" % (heading, " ".join(cmd.split()))
        if rc != 0:
            notok("%s: exit %d: %s" % (name, rc,
                                       err.strip().splitlines()[:3]))
            continue
        bad = check_writes(cmd, toks, out_file, out, rewrite)
        if bad:
            notok("%s: %s" % (name, bad))
        else:
            ok(name)
        if toks and os.path.basename(toks[0]) == "kg-eval":
            evals[cmd] = open(out_file).read() if out_file else out
    return evals


def check_table(readme_blocks, evals):
    """The UMLS table printed in the README against the measured MRR."""
    table = [l for h, b in readme_blocks if is_output(b) for l in b
             if l.split()[:1] == ["both"]]
    ev = [(c, t) for c, t in evals.items() if "umls-complex" in c]
    if not table or not ev:
        notok("the README's UMLS table or its kg-eval command is missing")
        return
    want = float(table[0].split()[1])
    j = first_json(ev[0][1])
    got = j["metrics"]["both"]["mrr"] if j else None
    if got is not None and abs(got - want) <= 0.03:
        ok("the README's UMLS MRR %.4f matches the run's %.4f" % (want, got))
    else:
        notok("the README shows UMLS MRR %.4f, the run gives %s"
              % (want, got))


def second_pass(blocks, evals, rewrite):
    """The distributed block again, over outputs that exist by now."""
    lines = [b for h, b in blocks
             if h.lower().endswith(DIST_HEADING.lower()) and
             not is_output(b)]
    if not lines:
        notok("no block under '%s'" % DIST_HEADING)
        return
    cmds = lines[0]
    before = {}
    for cmd in cmds:
        for d in outputs(words(cmd)[0]):
            if os.path.isdir(d):
                before[d] = tree_sum(d)
    res = run_session(cmds, rewrite)
    for cmd, (rc, out, err) in zip(cmds, res):
        toks, out_file = words(cmd)
        name = "again, %s" % " ".join(cmd.split())
        outs = outputs(toks)
        if outs:
            if rc == 0:
                notok("%s: exit 0 over the existing %s" % (name, outs[0]))
            elif "--force" not in err:
                notok("%s: exit %d without naming --force: %s"
                      % (name, rc, err.strip().splitlines()[:3]))
            elif any(d not in before or tree_sum(d) != before[d]
                     for d in outs):
                notok("%s: changed or removed %s" % (name, outs[0]))
            else:
                ok("%s: refused, %s left as it was" % (name, outs[0]))
        elif toks and os.path.basename(toks[0]) == "kg-eval":
            text = open(out_file).read() if out_file else out
            if rc != 0:
                notok("%s: exit %d: %s" % (name, rc,
                                           err.strip().splitlines()[:3]))
            elif metrics_of(text) is None or \
                    metrics_of(text) != metrics_of(evals.get(cmd, "")):
                notok("%s: metrics differ from the first run" % name)
            else:
                ok("%s: the same metrics" % name)
        elif rc != 0:
            notok("%s: exit %d" % (name, rc))


def leftovers():
    """Temporaries that a finished run must not leave."""
    found = []
    for root, dirs, files in os.walk("work"):
        found += [os.path.join(root, n) for n in dirs + files
                  if n.startswith(".")]
    tmp = os.environ.get("TMPDIR", "/tmp")
    found += [os.path.join(tmp, n) for n in os.listdir(tmp)
              if n.startswith("kgpipe")]
    if found:
        notok("temporaries left behind: %s" % " ".join(sorted(found)[:5]))
    else:
        ok("no temporaries left in work/ or $TMPDIR")


def main():
    rewrite = None
    if os.environ.get("READMETEST_REWRITE"):
        rewrite = tuple(os.environ["READMETEST_REWRITE"].split("=", 1))
    readme = blocks_of(sys.argv[1])
    blocks = readme + [b for page in sys.argv[2:] for b in blocks_of(page)]
    evals = first_pass(blocks, rewrite)
    check_table(readme, evals)
    second_pass(blocks, evals, rewrite)
    leftovers()
    print("1..%d" % checks)


main()
