"""Prints the table of `make bench` from the result lines the bench programs wrote.

    python3 benches/report.py RESULTS.tsv

Each input line is `system<TAB>key<TAB>value<TAB>note` (value `NA` when it could not be
measured, the note saying why). The table is Markdown, so it can be pasted into
docs/performance.md as it is. Ratios read "how many times faster ours is": the
alternative's time over ours, or our rate over the alternative's; below 1 the alternative
is faster. Nothing here passes or fails: the targets at the end are only compared.
"""

from __future__ import annotations

import sys

SYSTEMS = [("ours", "ours"), ("v08", "claimdag 0.8"), ("sqlite", "SQLite"),
           ("sqlite-min", "SQLite, minimal table"), ("filelock", "filelock+JSON")]
SIZES = ["1k", "10k", "100k", "1M"]

# (key, label, kind): kind "time" and "mem" are lower-is-better, "rate" higher-is-better,
# "info" has no ratio. "w1"/"w2" mark durable writes (1 or 2 a row) shown against the floor.
PER_SIZE = [
    ("import_s", "create the nodes in one write (s)", "time"),
    ("claim_us", "one durable claim (µs, median)", "time", "w1"),
    ("cycle_us", "claim + complete, 2 durable writes (µs, median)", "time", "w2"),
    ("cycles_per_s", "claim + complete cycles per second", "rate"),
    ("floor_us", "bare 300 B append + fdatasync, paired (µs, median)", "info"),
    ("floor_over_us", "bare 300 B write over written blocks + fdatasync, paired (µs, median)",
     "info"),
    ("claim_nosync_us", "one claim without fsync (µs, median)", "time"),
    ("cycle_nosync_us", "claim + complete without fsync (µs, median)", "time"),
    ("next_cycle_us", "claim-next + complete, the store picks, durable (µs, median)", "time"),
    ("next_cycle_nosync_us", "claim-next + complete without fsync (µs, median)", "time"),
    ("load_ms", "load after a restart, fresh process: ready for lookups by id (ms)", "time"),
    ("load_all_ms", "then every node decoded (the first `list`) (ms)", "time"),
    ("first_pick_ms", "another fresh process: the first pick after its load (`next`) (ms)", "time"),
    ("pick_hwm_b_per_node", "peak resident memory per node of that process (B)", "mem"),
    ("rss_lazy_b_per_node", "resident memory per node after load (B)", "mem"),
    ("rss_b_per_node", "resident memory per node, every node decoded (B)", "mem"),
    ("hwm_b_per_node", "peak resident memory per node while loading and decoding (B)", "mem"),
    ("disk_b_per_node", "bytes on disk per node", "mem"),
]
OTHER = [
    ("In process, several processes", [
        ("lib_drain4_wps", "4 processes drain 1,000 nodes, library loops (writes/s)", "rate"),
        ("lib_threads8_wps", "8 threads of one process drain 1,000 nodes (writes/s)", "rate"),
    ]),
    ("The journal over a long run (claims and releases on 1,000 nodes, no fsync)", [
        (f"journal_max_kib@{n}w", f"{n} writes: largest journal on disk, reserve included (KiB)",
         "info") for n in ("1M", "100k")
    ] + [
        (f"{k}@{n}w", f"{n} writes: {what}", "info") for n in ("1M", "100k")
        for k, what in (("store_mib", "the store on disk at the end (MiB)"),
                        ("compactions", "compactions"),
                        ("compaction_ms", "the write that ran a compaction (ms, median)"))
    ]),
    ("Command line (each step a new process)", [
        ("cli_true_ms", "any process: `/bin/true` (ms, median)", "info"),
        ("cli_start_ms", "process start: `--version` (ms, median)", "time"),
        ("cli_read_ms@4096", "one read at 4,096 nodes: `show`/`get` (ms, median)", "time"),
        ("cli_claim_ms@4096", "one claim at 4,096 nodes (ms, median)", "time"),
        ("cli_import_s@4096", "create 4,096 nodes (s)", "time"),
        ("cli_drain4_wps", "4 processes drain 1,000 nodes: claim-next + complete (writes/s)",
         "rate"),
        ("cli_drain4_ceiling_wps", "the same 4 loops, each step `/bin/true` (steps/s)", "info"),
        ("cli_drain8_wps", "8 processes drain 1,000 nodes (writes/s)", "rate"),
        ("cli_claim_ms@1k", "one claim at 1,000 nodes (ms, median)", "time"),
        ("cli_claim_ms@100k", "one claim at 100,000 nodes (ms, median)", "time"),
        ("cli_show_ms@1k", "one `show` at 1,000 nodes (ms, median)", "time"),
        ("cli_show_ms@100k", "one `show` at 100,000 nodes (ms, median)", "time"),
        ("cli_list_claimed_ms@1k", "`list --status claimed` at 1,000 nodes (ms, median)", "time"),
        ("cli_list_claimed_ms@100k", "`list --status claimed` at 100,000 nodes (ms, median)",
         "time"),
        ("cli_import_s@100k", "import 100,000 nodes (s)", "time"),
    ]),
]


def read(path: str):
    values: dict = {}
    notes: dict = {}
    for line in open(path, encoding="utf-8"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 3 or parts[0].startswith("#"):
            continue
        system, key, value = parts[:3]
        note = parts[3] if len(parts) > 3 else ""
        values[(system, key)] = None if value == "NA" else float(value)
        if note and not note.startswith("median"):
            notes[(system, key)] = note
    return values, notes


def fmt(v) -> str:
    if v is None:
        return "n/a"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def ratio(ours, alt, kind: str) -> str:
    if ours is None or alt is None or ours <= 0 or alt <= 0 or kind == "info":
        return ""
    r = ours / alt if kind == "rate" else alt / ours
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x"


def main() -> None:
    values, notes = read(sys.argv[1])
    get = values.get
    present = {s for s, _ in values}
    header = ["measurement", "ours", "ours ÷ floor"] + [name for s, name in SYSTEMS[1:]] + [
        f"{name} vs ours" for s, name in SYSTEMS[1:]]
    rows: list[list[str]] = []
    footnotes: list[str] = []

    def footnote(name: str, text: str) -> int:
        entry = f"{name}: {text}"
        if entry not in footnotes:
            footnotes.append(entry)
        return footnotes.index(entry) + 1

    def row(key: str, label: str, kind: str, writes: int = 0) -> None:
        ours = get(("ours", key))
        cells = [label, fmt(ours)]
        paired = get(("ours", key.replace("_us@", "_floor_x@"))) if writes else None
        cells.append(f"{paired:.2f}" if paired else "")
        for s, name in SYSTEMS[1:]:
            v = get((s, key))
            cell = fmt(v) if (s, key) in values else "-"
            if (s, key) in notes:
                cell += f" [{footnote(name, notes[(s, key)])}]"
            cells.append(cell)
        for s, _ in SYSTEMS[1:]:
            cells.append(ratio(ours, get((s, key)), kind))
        if ("ours", key) in notes:
            cells[1] += f" [{footnote('ours', notes[('ours', key)])}]"
        rows.append(cells)

    def section(title: str) -> None:
        rows.append([f"**{title}**"] + [""] * (len(header) - 1))

    section("Physical floor")
    row("floor_us", "bare 300 B append + fdatasync (µs, median)", "info")
    for size in SIZES:
        if not any((s, f"import_s@{size}") in values for s in present):
            continue
        section(f"In process, {size} nodes")
        for spec in PER_SIZE:
            key, label, kind = spec[:3]
            writes = {"w1": 1, "w2": 2}.get(spec[3] if len(spec) > 3 else "", 0)
            row(f"{key}@{size}", label, kind, writes)
    for title, specs in OTHER:
        section(title)
        for key, label, kind in specs:
            # The long run is 1M writes or 100k (QUICK): only the one measured.
            if key.endswith("w") and ("ours", key) not in values:
                continue
            row(key, label, kind)

    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        out = []
        for i, c in enumerate(cells):
            out.append(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]))
        return "| " + " | ".join(out) + " |"

    print(line(header))
    print("|" + "|".join(("-" * (w + 1) + ":") if i else ("-" * (w + 2))
                         for i, w in enumerate(widths)) + "|")
    for r in rows:
        print(line(r))
    print()
    print("Ratios: how many times faster (or smaller) ours is: the alternative's time over ours, "
          "or our rate over the alternative's; below 1 the alternative is ahead. "
          "ours ÷ floor: the median over samples of our durable write (per write) over the "
          "bare append + fdatasync timed just before it. '-': not measured for that system.")
    if footnotes:
        print()
    for i, f in enumerate(footnotes, 1):
        print(f"- [{i}] {f}")
    print()
    targets(values)


def targets(values: dict) -> None:
    get = values.get
    print("Targets of picking at scale (compared, never enforced):")
    for mode, suffix in (("without fsync", "_nosync"), ("durable", "")):
        big = [s for s in ("100k", "1M") if get(("ours", f"next_cycle{suffix}_us@{s}"))]
        small = get(("ours", f"next_cycle{suffix}_us@1k"))
        for s in big:
            nxt = get(("ours", f"next_cycle{suffix}_us@{s}"))
            by_id = get(("ours", f"cycle{suffix}_us@{s}"))
            if by_id:
                r = nxt / by_id
                print(f"- claim-next + complete at {s} within 1.5x of claim(id) + complete at {s} "
                      f"({mode}): {nxt:.1f} vs {by_id:.1f} µs = {r:.2f}x"
                      f" -> {'within' if r <= 1.5 else 'outside'} target")
            if small:
                r = nxt / small
                print(f"- claim-next + complete at {s} within 2x of the same at 1k ({mode}): "
                      f"{nxt:.1f} vs {small:.1f} µs = {r:.2f}x"
                      f" -> {'within' if r <= 2 else 'outside'} target")
        sq = get(("sqlite", f"next_cycle{suffix}_us@100k"))
        ours = get(("ours", f"next_cycle{suffix}_us@100k"))
        if sq and ours:
            print(f"- claim-next cycle at 100k no slower than SQLite's ({mode}): {ours:.1f} vs "
                  f"{sq:.1f} µs = {sq / ours:.2f}x -> {'within' if ours <= sq else 'outside'} target")
        mn = get(("sqlite-min", f"next_cycle{suffix}_us@100k"))
        if mn and ours:
            print(f"- claim-next cycle at 100k at most 1.0x the minimal SQLite claim table's "
                  f"({mode}): {ours:.1f} vs {mn:.1f} µs = {ours / mn:.2f}x"
                  f" -> {'within' if ours <= mn else 'outside'} target")
    targets_at_scale(get)
    print()
    print("Targets of a claim's cost (compared, never enforced):")
    claims = [(s, get(("ours", f"claim_us@{s}")), get(("ours", f"claim_floor_x@{s}")))
              for s in SIZES]
    claims = [(s, c, x) for s, c, x in claims if c and x]
    if claims:
        worst = max(x for _, _, x in claims)
        detail = ", ".join(f"{s}: {x:.2f}x" for s, _, x in claims)
        spread = max(x for _, _, x in claims) / min(x for _, _, x in claims)
        raw = max(c for _, c, _ in claims) / min(c for _, c, _ in claims)
        print(f"- one durable claim within 2x of one fdatasync: worst {worst:.2f}x ({detail})"
              f" -> {'within' if worst <= 2 else 'outside'} target")
        nosync = [get(("ours", f"claim_nosync_us@{s}")) for s, _, _ in claims]
        cpu = (f"; without fsync {max(nosync) / min(nosync):.2f}x"
               if all(nosync) else "")
        print(f"- flat within 1.5x from {claims[0][0]} to {claims[-1][0]}: largest / smallest "
              f"claim ÷ floor = {spread:.2f}x (raw medians {raw:.2f}x, the disk drifts{cpu})"
              f" -> {'within' if spread <= 1.5 else 'outside'} target")
    over = [(s, get(("ours", f"claim_over_floor_x@{s}"))) for s in SIZES]
    over = [(s, x) for s, x in over if x]
    if over:
        worst = max(x for _, x in over)
        detail = ", ".join(f"{s}: {x:.2f}x" for s, x in over)
        print(f"- one durable write within 1.15x of one fdatasync over already-written blocks: "
              f"worst {worst:.2f}x ({detail}) -> {'within' if worst <= 1.15 else 'outside'} "
              f"target")
    c = get(("ours", "cli_claim_ms@4096"))
    if c:
        print(f"- CLI claim at 4,096 nodes under 3 ms median: {c:.2f} ms"
              f" -> {'within' if c < 3 else 'outside'} target")
    o, v = get(("ours", "cli_drain4_wps")), get(("v08", "cli_drain4_wps"))
    if o and v:
        print(f"- 4-process CLI drain at least 10x claimdag 0.8: {o:.0f} vs {v:.0f} writes/s = "
              f"{o / v:.1f}x -> {'within' if o / v >= 10 else 'outside'} target")
    elif o:
        print(f"- 4-process CLI drain: {o:.0f} writes/s; claimdag 0.8 not measured")
    for key, what in (("import_s@100k", "library"), ("cli_import_s@100k", "CLI")):
        t = get(("ours", key))
        if t:
            print(f"- 100,000 nodes imported in under 2 s ({what}): {t:.2f} s"
                  f" -> {'within' if t < 2 else 'outside'} target")
    for size in reversed(SIZES):
        r, h = get(("ours", f"rss_b_per_node@{size}")), get(("ours", f"hwm_b_per_node@{size}"))
        if r:
            print(f"- at most 1 KiB resident per node ({size} nodes): {r:.0f} B with every node decoded, "
                  f"{h:.0f} B at the peak -> {'within' if r <= 1024 else 'outside'} target")
            break


def targets_at_scale(get) -> None:
    """Targets of the command line, many writers, the CLI drain and 1M nodes."""
    for verb, key in (("claim", "cli_claim_ms"), ("show", "cli_show_ms"),
                      ("list --status claimed", "cli_list_claimed_ms")):
        big, small = get(("ours", f"{key}@100k")), get(("ours", f"{key}@1k"))
        if big and small:
            r = big / small
            print(f"- CLI `{verb}` at 100k within 3x of the same at 1k: {big:.1f} vs "
                  f"{small:.1f} ms = {r:.1f}x -> {'within' if r <= 3 else 'outside'} target")
    for key, what, goal in (("lib_threads8_wps", "8 threads on one Store", 2.0),
                            ("lib_drain4_wps", "4 processes through the library", 1.5)):
        o, q = get(("ours", key)), get(("sqlite", key))
        if o and q:
            print(f"- {what} at least {goal}x SQLite's writes/s: {o:.0f} vs {q:.0f} = "
                  f"{o / q:.2f}x -> {'within' if o / q >= goal else 'outside'} target")
            if key == "lib_drain4_wps":
                print(f"- {what} at least 1.0x SQLite's writes/s (the write floor's goal): "
                      f"{o / q:.2f}x -> {'within' if o >= q else 'outside'} target")
    o, c = get(("ours", "cli_drain4_wps")), get(("ours", "cli_drain4_ceiling_wps"))
    if o and c:
        v = get(("v08", "cli_drain4_wps"))
        v08 = f"; claimdag 0.8 {v:.0f} writes/s" if v else ""
        print(f"- 4-process CLI drain at least 50% of the machine's ceiling (the same loops "
              f"spawning /bin/true): {o:.0f} vs {c:.0f} = {100 * o / c:.0f}%{v08}"
              f" -> {'within' if o >= c / 2 else 'outside'} target")
    load, whole = get(("ours", "load_ms@1M")), get(("ours", "load_all_ms@1M"))
    pick = get(("ours", "first_pick_ms@1M"))
    if load:
        then = f"; decoding every node then (a list) {whole:.0f} ms" if whole else ""
        then += f"; a fresh process's first pick {pick:.0f} ms" if pick else ""
        print(f"- load after a restart at 1M nodes at most half of 0.66 s: {load:.0f} ms{then}"
              f" -> {'within' if load <= 330 else 'outside'} target")


if __name__ == "__main__":
    main()
