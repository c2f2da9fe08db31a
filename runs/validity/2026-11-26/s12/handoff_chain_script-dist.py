"""Structural comparison: Rust handoff_chain instances (generated RON) vs the
script's generate() driven through tbsim-script with the same companies and dates."""
import json, re, subprocess, sys, glob, statistics as st, collections

HOST = "/work/main/target/script/release/tbsim-script"
STAR = sys.argv[1]

def people_of(ron):
    out = []
    for m in re.finditer(r'Person\(\s*key: "([^"]+)",\s*name: "([^"]+)",\s*department: "([^"]+)",\s*position: "([^"]+)"', ron):
        out.append({"key": m[1], "name": m[2], "department": m[3], "position": m[4]})
    return out

def stage_stats_rust(ron):
    variant = re.search(r'variant: "handoff_chain/(\w+)/len(\d)"', ron)
    kind, n = variant[1], int(variant[2])
    blocks = ron.split("TaskSpec(")[1:]
    recs = [b.count("Record(") for b in blocks]
    extra = {}
    m = re.search(r'JsonStringSet\(\s*path: "[^"]+",\s*pointer: "/over_budget",\s*expected: \[([^\]]*)\]', ron)
    if m: extra["over"] = len(re.findall(r'"CC-', m[1]))
    m = re.search(r'MessageSent\(\s*to: "[^"]+",\s*contains: \[\s*"(\d+)"', ron)
    if m: extra["cost"] = int(m[1])
    m = re.search(r'each table seats (\d+)', ron)
    if m: extra["size"] = int(m[1])
    m = re.search(r'pointer: "/total_tables",\s*expected: ([\d.]+)', ron)
    if m: extra["total_tables"] = float(m[1])
    return (kind, n), recs, extra

def stage_stats_script(out):
    tasks = out["tasks"]
    kind, n = tasks[0]["variant"].split("_len")
    s = json.dumps(out)
    recs = [json.dumps(t["checkpoints"]).count('"numbers"') for t in tasks]
    extra = {}
    for t in tasks:
        for c in t["checkpoints"]:
            ch = c["check"]
            if "JsonStringSet" in ch: extra["over"] = len(ch["JsonStringSet"]["expected"])
            if "MessageSent" in ch: extra["cost"] = int(ch["MessageSent"]["contains"][0])
            if "All" in ch:
                for p in ch["All"]:
                    if "JsonNumber" in p: extra["total_tables"] = float(p["JsonNumber"]["expected"])
    m = re.search(r'each table seats (\d+)', s)
    if m: extra["size"] = int(m[1])
    return (kind, int(n)), recs, extra

rust = collections.defaultdict(list)
inputs = []
for f in sorted(glob.glob("/tmp/hc/genbig/*.ron")):
    ron = open(f).read()
    key, recs, extra = stage_stats_rust(ron)
    rust[key].append((recs, extra))
    name = re.search(r'name: "([^"]+)"', ron)[1]
    date = re.search(r'start: "(\d{4}-\d\d-\d\d)T', ron)[1]
    inputs.append((name, date, people_of(ron), key))

p = subprocess.Popen([HOST], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def req(r):
    p.stdin.write(json.dumps(r) + "\n"); p.stdin.flush()
    a = json.loads(p.stdout.readline())
    if "err" in a: raise SystemExit(json.dumps(a["err"]))
    return a["ok"]
req({"op": "hello"}); req({"op": "corpus", "corpus": {}})
h = req({"op": "load", "file": STAR, "source": open(STAR).read()})["handle"]
script = collections.defaultdict(list)
for i, (name, date, people, key) in enumerate(inputs):
    for seed in range(2):  # two draws per company, both variants' params as the Rust instance's
        inp = {"seed": 11 + seed, "scenario": name + "-%d" % seed, "id": "d1-handoff-chain", "date": date,
               "start": "09:00", "deadline": "17:00", "day": 1, "people": people,
               "mentor": people[0]["key"], "rooms": [], "release": "Start"}
        out = req({"op": "generate", "handle": h, "input": inp, "params": {"kind": key[0], "length": key[1]}})
        k, recs, extra = stage_stats_script(out)
        script[k].append((recs, extra))

def summ(xs):
    if not xs: return "-"
    return "%.1f [%d-%d]" % (st.mean(xs), min(xs), max(xs))

print("| variant | stat | Rust (n) | script (n) |")
print("| --- | --- | --- | --- |")
for key in sorted(rust):
    R, S = rust[key], script[key]
    label = "%s_len%d" % key
    for i in range(key[1]):
        print("| %s | expected records, stage %d | %s (%d) | %s (%d) |" % (label, i + 1,
              summ([r[0][i] for r in R]), len(R), summ([s[0][i] for s in S]), len(S)))
    for x in ["size", "total_tables", "over", "cost"]:
        rv = [r[1][x] for r in R if x in r[1]]; sv = [s[1][x] for s in S if x in s[1]]
        if rv or sv:
            print("| %s | %s | %s | %s |" % (label, x, summ(rv), summ(sv)))
