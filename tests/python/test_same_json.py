"""Every front door gives the same JSON for the same store: the CLI's --json, the C ABI's
_json functions (through tests/c/json_dump.c, built here against the release library) and
the Python module's to_dict() / call(), for show, list, ready, log, reclaim and import, and
for an error body."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

import pytest

import claimdag
from conftest import ME, YOU, command

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def json_dump(tmp_path_factory: pytest.TempPathFactory) -> str:
    lib = pathlib.Path(os.environ.get("CLAIMDAG_C_LIB_DIR", ROOT / "target" / "release"))
    assert (lib / "libclaimdag.so").exists(), (
        f"{lib}/libclaimdag.so is missing: tests/python/run.sh builds it "
        "(cargo build --release -p claimdag-capi)"
    )
    out = tmp_path_factory.mktemp("c") / "json_dump"
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Werror", f"-I{ROOT / 'include'}",
         str(ROOT / "tests" / "c" / "json_dump.c"), str(lib / "libclaimdag.so"),
         f"-Wl,-rpath,{lib}", "-o", str(out)],
        check=True,
    )
    return str(out)


def cli(d: pathlib.Path, *args: str) -> tuple[int, object]:
    r = subprocess.run([command(), "--dir", str(d), "--json", *args],
                       capture_output=True, text=True, timeout=60)
    text = r.stdout if r.returncode == 0 else r.stderr
    return r.returncode, json.loads(text)


def c(dump: str, d: pathlib.Path, *args: str) -> tuple[int, object]:
    r = subprocess.run([dump, str(d), *args], capture_output=True, text=True, timeout=60)
    assert r.stdout, r.stderr
    return r.returncode, json.loads(r.stdout)


@pytest.fixture
def seeded(store_dir: pathlib.Path) -> pathlib.Path:
    s = claimdag.Store(store_dir)
    ids = dict(s.import_plan({"nodes": [
        {"key": "a", "summary": "parse the manifest header", "estimate": 3,
         "labels": ["parser"], "resources": ["src/parser/"]},
        {"key": "b", "summary": "reject a manifest with no header", "deps": ["a"]},
        {"key": "c", "summary": "document the format", "soft_deps": ["a"], "role": "writer"},
        {"key": "d", "summary": "finished and archived"},
        {"key": "e", "summary": "an independent task", "estimate": 2, "priority": 1},
        {"key": "f", "summary": "after the independent task", "deps": ["e"]},
    ]}))
    by_key = {k: i for i, k in ids.items()}
    s.claim(by_key["a"], ME, ttl=600)
    s.complete(by_key["d"], gen=s.claim(by_key["d"], YOU), actor=YOU, note="done")
    s.archive(by_key["d"])
    return store_dir


def test_reads_are_the_same_json_in_every_front_door(seeded: pathlib.Path, json_dump: str) -> None:
    s = claimdag.Store(seeded)
    a = next(n.id for n in s.list() if n.summary.startswith("parse"))
    d = next(n.id for n in s.list(archived=True))
    for node in (a, d):
        assert cli(seeded, "show", node) == c(json_dump, seeded, "show", node) \
            == (0, s.get(node).to_dict())
    everything = [n.to_dict() for n in s.list(terminal=True)] + \
        [n.to_dict() for n in s.list(archived=True)]
    assert cli(seeded, "list", "--all") == c(json_dump, seeded, "list") == (0, everything)
    ready = [p.to_dict() for p in s.ready()]
    assert ready and "summary" in ready[0]
    assert cli(seeded, "ready") == c(json_dump, seeded, "ready") == (0, ready)
    log = [e.to_dict() for e in s.log()]
    assert cli(seeded, "log") == c(json_dump, seeded, "log") == (0, log)
    assert all("i" in e and "seq" in e for e in log)
    assert s.call("log") == log and s.call("show", node=a) == s.get(a).to_dict()


def test_writes_reply_the_same_json_in_every_front_door(
    seeded: pathlib.Path, json_dump: str, tmp_path: pathlib.Path
) -> None:
    # Each door writes to its own copy of the same store.
    copies = {}
    for door in ("cli", "c", "python"):
        copies[door] = tmp_path / door
        shutil.copytree(seeded, copies[door])
    handed = {
        "cli": cli(copies["cli"], "reclaim", "--lease", "0"),
        "c": c(json_dump, copies["c"], "reclaim", "0"),
        "python": (0, claimdag.Store(copies["python"]).call("reclaim", lease=0)),
    }
    assert handed["cli"] == handed["c"] == handed["python"]
    assert len(handed["cli"][1]) == 1  # type: ignore[arg-type]
    plan = {"nodes": [{"key": "x", "summary": "new work"},
                      {"key": "y", "summary": "after it", "deps": ["x"]}]}
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    imported = {
        "cli": cli(copies["cli"], "import", str(plan_file)),
        "c": c(json_dump, copies["c"], "import", str(plan_file)),
        "python": (0, claimdag.Store(copies["python"]).call("import", plan=plan)),
    }
    assert imported["cli"] == imported["c"] == imported["python"]
    ids = claimdag.Store(copies["python"]).import_plan(plan)
    assert [{"id": i, "key": k} for i, k in ids] == imported["python"][1]


def test_an_error_body_is_the_same_in_every_front_door(seeded: pathlib.Path, json_dump: str) -> None:
    s = claimdag.Store(seeded)
    a = next(n.id for n in s.list() if n.summary.startswith("parse"))
    code, body = cli(seeded, "claim", a, "--assignee", YOU)
    assert code == 4
    c_code, c_body = c(json_dump, seeded, "claim", a, YOU)
    assert c_code == 1
    with pytest.raises(claimdag.AlreadyClaimed) as info:
        s.claim(a, YOU)
    assert body == {"error": c_body} == {"error": info.value.body}
    assert c_body["code"] == "already_claimed" and c_body["holder"] == ME
    # And through the generic doors.
    assert c(json_dump, seeded, "call", "claim", json.dumps({"node": a, "assignee": YOU}))[1] \
        == c_body


def _recipe(name: str) -> str:
    """The actor recipe of SPEC section 8, computed here independently of claimdag."""
    import hashlib
    import struct

    h = hashlib.sha256()
    for part in (b"claimdag-actor-v1", name.encode()):
        h.update(struct.pack(">Q", len(part)) + part)
    return h.hexdigest()[:32]


@pytest.mark.parametrize("name", ["codex-1", "a", "Worker.7@host_x", "x" * 64])
def test_actor_names_follow_the_recipe_in_every_front_door(
    name: str, store_dir: pathlib.Path, json_dump: str
) -> None:
    want = _recipe(name)
    assert claimdag.actor(name) == want
    r = subprocess.run([command(), "actor", name], capture_output=True, text=True)
    assert r.stdout == want + "\n", r.stderr
    assert c(json_dump, store_dir, "call", "actor", json.dumps({"name": name})) \
        == (0, {"actor": want})
    s = claimdag.Store(store_dir)
    a = s.upsert("named")
    s.claim(a, f"name:{name}")
    assert s.get(a).holder == want
    assert [n.id for n in s.list(holder=f"name:{name}")] == [a]


@pytest.mark.parametrize("bad", ["", "a b", "é", "x" * 65, "semi;colon"])
def test_bad_actor_names_are_invalid_input(bad: str, store: claimdag.Store) -> None:
    with pytest.raises(claimdag.InvalidInput):
        claimdag.actor(bad)
    with pytest.raises(claimdag.InvalidInput):
        store.claim(store.upsert("x"), f"name:{bad}")


def test_every_event_records_the_door_it_came_through(
        store_dir: pathlib.Path, json_dump: str) -> None:
    assert cli(store_dir, "upsert", "--summary", "from the command line")[0] == 0
    assert c(json_dump, store_dir, "call", "upsert", '{"summary": "from C"}')[0] == 0
    claimdag.Store(store_dir).upsert("from Python")
    code, log = cli(store_dir, "log")
    assert code == 0
    assert [e.get("door") for e in log] == ["cli", "c", "python"]  # type: ignore[union-attr]
    events = claimdag.Store(store_dir).log()
    assert [e.door for e in events] == ["cli", "c", "python"]
    assert [e.to_dict()["door"] for e in events] == ["cli", "c", "python"]
    text = subprocess.run([command(), "--dir", str(store_dir), "log"], capture_output=True,
                          text=True, check=True).stdout.splitlines()
    assert [line.rsplit("  ", 1)[1] for line in text] == ["via=cli", "via=c", "via=python"]
