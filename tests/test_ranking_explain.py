"""The ranking rule (design.md: lowest predicted time; an optional near-tie band ordered by
hop-bytes in the API) and auto's explanation of its pick."""

import json
from types import SimpleNamespace

import pytest

from rankmap.cli import main
from rankmap.evaluation import Comparison
from rankmap.metrics import NEAR_TIE, best_first_order, near_tie_band, ranking_key
from rankmap.report.render import explain_pick, pick_facts

MiB = 2.0 ** 20


def met(t_ms, busiest_mib, hb_gib):
    return {"predicted_time_s": t_ms * 1e-3, "max_link_bytes": busiest_mib * MiB,
            "hop_bytes": hb_gib * 2.0 ** 30}


def test_near_tie_band_goes_to_fewer_hop_bytes():
    ms = [met(32.076, 13, 129.5),    # fastest, many hop-bytes (80x50 on 16^3: TXYZ)
          met(32.077, 13, 74.8),     # 0.003 % slower, 0.58x the hop-bytes (graph)
          met(33.9, 13, 10.0),       # 5.7 % slower: outside the band, however few hop-bytes
          met(59.2, 24, 90.6)]
    assert NEAR_TIE == 0.0                              # design.md's best: the fastest
    assert best_first_order(ms) == [0, 1, 2, 3]
    assert near_tie_band(ms, 0.05) == [0, 1]
    assert best_first_order(ms, 0.05) == [1, 0, 2, 3]
    # tolerance 0 is the plain ranking key
    assert best_first_order(ms, 0.0) == sorted(range(4), key=lambda i: ranking_key(ms[i]))


def test_band_edges_and_without_time_model():
    ms = [met(100.0, 1, 9), met(105.0, 1, 1), met(105.1, 1, 0.5)]
    assert best_first_order(ms, 0.05) == [1, 0, 2]      # exactly 5 % is inside, 5.1 % is not
    assert best_first_order(ms) == [0, 1, 2]
    no_time = [{"max_link_bytes": 100.0, "hop_bytes": 9.0},
               {"max_link_bytes": 104.0, "hop_bytes": 1.0},
               {"max_link_bytes": 200.0, "hop_bytes": 0.1}]
    assert best_first_order(no_time, 0.05) == [1, 0, 2]  # the busiest link is the primary figure
    assert best_first_order(no_time) == [0, 1, 2]
    assert best_first_order([]) == []


def comparison(named):
    cands = [SimpleNamespace(name=n, metrics=m) for n, m in named]
    order = best_first_order([c.metrics for c in cands])
    return Comparison(None, None, None, "dor", [cands[i] for i in order],
                      {"graph": "left out above 8192 ranks"})


def test_pick_explained_when_faster():
    comp = comparison([("TXYZ", met(3.1, 2.0, 1.1)), ("graph", met(3.52, 2.6, 1.0)),
                       ("inorder", met(9.0, 7.0, 3.0))])
    f = pick_facts(comp)
    assert f["winner"] == "TXYZ" and f["runner_up"] == "graph" and f["decided_by"] == "faster"
    assert f["margin"] == pytest.approx(1 - 3.1 / 3.52)
    assert f["evaluated"] == 3 and f["skipped"] == 1
    assert explain_pick(comp) == ("TXYZ: predicted 3.1 ms, 11.9% below the next (graph, 3.52 "
                                  "ms); hop-bytes 1.10x graph's; busiest link 2.0 MiB vs "
                                  "2.6 MiB; 3 candidates evaluated, 1 skipped")


def test_exact_tie_goes_to_busiest_link_then_hop_bytes():
    ms = [met(32.0, 14, 10.0), met(32.0, 13, 90.0), met(32.0, 13, 70.0), met(40.0, 1, 1.0)]
    assert best_first_order(ms) == [2, 1, 0, 3]
    comp = comparison([("TXYZ", ms[0]), ("graph", ms[1]), ("rcb", ms[2]), ("hilbert", ms[3])])
    f = pick_facts(comp)
    assert f["winner"] == "rcb" and f["decided_by"] == "tie"
    assert f["band"] == ["rcb", "graph", "TXYZ"]
    assert explain_pick(comp).startswith("rcb: predicted 32 ms, as fast as 2 more; ahead of "
                                         "them on busiest link, then hop-bytes; hop-bytes "
                                         "0.78x graph's")


def test_cli_compare_prints_why_and_json_has_pick(capsys):
    args = ["compare", "--machine", "torus:4x4x4", "--pattern", "stencil:8x8",
            "--mappings", "inorder,XYZT,greedy,hilbert"]
    assert main(args) == 0
    out = capsys.readouterr().out
    why = [ln for ln in out.splitlines() if ln.startswith("why: ")]
    assert len(why) == 1 and "4 candidates evaluated" in out
    assert main(args + ["--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pick = doc["pick"]
    assert pick["winner"] == doc["best"] == doc["candidates"][0]["mapping"]
    assert pick["runner_up"] == doc["candidates"][1]["mapping"]
    t = [c["metrics"]["predicted_time_s"] for c in doc["candidates"][:2]]
    assert pick["margin"] == pytest.approx(1 - t[0] / t[1])
    assert pick["text"].startswith(f"{doc['best']}: predicted ")
