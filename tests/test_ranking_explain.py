"""The ranking rule (design.md: lowest predicted time; an optional near-tie band ordered by
hop-bytes in the API) and auto's explanation of its pick."""

import json
from types import SimpleNamespace

import pytest

from rankmap.cli import main
from rankmap.evaluation import Comparison
from rankmap.metrics import NEAR_TIE, best_first_order, near_tie_band, ranking_key
from rankmap.report.render import explain, explain_pick, pick_facts

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
    assert explain_pick(comp).startswith("rcb: predicted 32 ms, as fast as 2 more: a lighter "
                                         "busiest link than TXYZ, the same busiest link and "
                                         "fewer hop-bytes than graph; hop-bytes 0.78x graph's")


def test_a_tie_on_every_metric_says_the_order_decided():
    """Equal on predicted time, busiest link and hop-bytes: neither line claims the winner is
    faster or lighter; the pick says it was given first."""
    comp = comparison([("TXYZ", met(2.47, 1, 0.28)), ("rcb", met(2.47, 1, 0.28))])
    assert pick_facts(comp)["decided_by"] == "tie"
    assert explain_pick(comp) == ("TXYZ: predicted 2.47 ms, as fast as 1 more: the same busiest "
                                  "link and hop-bytes as rcb, and given before; hop-bytes 1.00x "
                                  "rcb's; busiest link 1.0 MiB vs 1.0 MiB; 2 candidates "
                                  "evaluated, 1 skipped")
    assert explain(comp) == ("TXYZ: the same predicted time and busiest link as rcb, "
                             "hop-bytes 1.00x rcb's")
    three = comparison([("TXYZ", met(2.47, 1, 0.28)), ("rcb", met(2.47, 1, 0.28)),
                        ("XYZT", met(2.47, 1, 0.28)), ("inorder", met(2.47, 2, 0.5))])
    assert "as fast as 3 more: a lighter busiest link than inorder, the same busiest link and " \
           "hop-bytes as 2 of them, and given before" in explain_pick(three)


def test_the_reference_line_gives_small_gains_in_percent_and_losses_as_such():
    """A gain that two decimals would show as 1.00x is given in percent; a heavier busiest
    link is called heavier."""
    comp = comparison([("TXYZ", met(10.0, 3, 1.0)), ("inorder", met(10.004, 2, 1.0))])
    assert explain(comp) == ("TXYZ: predicted time 0.04% shorter, busiest link 1.50x heavier "
                             "than inorder, hop-bytes 1.00x inorder's")


def test_a_near_tie_band_pick_says_it_went_to_fewer_hop_bytes():
    """With the API's near-tie tolerance the band is ordered by hop-bytes, so an exact tie can
    go to the candidate with the heavier busiest link: the line says so."""
    named = [("graph", met(32.0, 13, 90.0)), ("TXYZ", met(32.0, 14, 10.0))]
    cands = [SimpleNamespace(name=n, metrics=m) for n, m in named]
    order = best_first_order([c.metrics for c in cands], 0.05)
    comp = Comparison(None, None, None, "dor", [cands[i] for i in order], {})
    assert comp.candidates[0].name == "TXYZ"
    assert "as fast as 1 more: fewer hop-bytes than graph, inside the near-tie band" \
        in explain_pick(comp)


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


def test_explain_says_why_when_nothing_crosses_the_network():
    """Every rank on one node: no figure differs, and the line still gives a reason."""
    zero = {"max_link_bytes": 0.0, "hop_bytes": 0.0}
    comp = comparison([("TXY", dict(zero)), ("inorder", dict(zero))])
    assert explain(comp) == ("TXY: no traffic crosses the network under it or inorder: "
                             "a tie, given first")
    assert main(["compare", "-m", "torus:4x4:cores=16", "-p", "stencil:4x4", "--nodes", "0",
                 "--time-model", "off", "--mappings", "TXY,inorder"]) == 0


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_a_bad_tolerance_is_an_error_not_plain_order(bad):
    from rankmap.errors import RankmapError
    with pytest.raises(RankmapError, match="bad tolerance"):
        best_first_order([met(1, 1, 1), met(2, 1, 1)], bad)


def test_busiest_ratio_never_hides_traffic_against_an_idle_reference(capsys):
    """A reference with no network traffic (every rank on one node) gives no ratio: the
    others read n/a, not 1.00 ('no worse'); evaluate's lone candidate has no ratio column."""
    from rankmap.report.render import busiest_ratio
    ev = lambda b: SimpleNamespace(metrics={"max_link_bytes": b})   # noqa: E731
    assert busiest_ratio(ev(3.0), ev(2.0)) == "1.50"
    assert busiest_ratio(ev(7.0), ev(0.0)) == "n/a"
    assert busiest_ratio(ev(0.0), ev(0.0)) == "1.00"
    assert main(["compare", "-m", "torus:4x4:cores=16", "-p", "stencil:4x4", "--mappings",
                 "inorder,XTY"]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("│")]
    assert rows[0].rstrip(" │").endswith("1.00") and rows[1].rstrip(" │").endswith("n/a")
    assert main(["evaluate", "-m", "torus:4x4", "-p", "stencil:4x4", "--mapping", "XYT",
                 "--format", "table"]) == 0
    assert "vs" not in capsys.readouterr().out


def test_a_winner_without_network_traffic_reads_as_a_sentence(capsys):
    """'predicted time 2.94x shorter, no network traffic at all than XYT' read as if the
    traffic were compared: what is compared ends with 'than XYT', what is said alone follows."""
    from rankmap.cli import main
    assert main(["compare", "-m", "torus:2x2:cores=4", "-p", "stencil:2x2",
                 "--mappings", "XYT,TXY"]) == 0
    best = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("best:")][0]
    assert best == ("best: TXY: predicted time 2.94x shorter than XYT; no network traffic at "
                    "all, hop-bytes 0.00x XYT's")


def test_a_baseline_that_is_not_inorder_is_called_the_worst(capsys):
    """Without inorder, 'Nx lighter than rcb' measured the winner against the worst
    candidate and read as a gain on the default order: the line says which it is."""
    from rankmap.cli import main
    assert main(["compare", "-m", "torus:4x4x4:cores=2", "-p", "stencil:8x16",
                 "--mappings", "greedy,fold,XYZT,rcb"]) == 0
    best = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("best:")][0]
    assert "than rcb" in best
    assert best.endswith("(rcb is the worst candidate: inorder, the usual baseline, was not "
                         "evaluated)")
    assert main(["compare", "-m", "torus:4x4x4:cores=2", "-p", "stencil:8x16",
                 "--mappings", "greedy,inorder"]) == 0
    assert "worst candidate" not in capsys.readouterr().out


def test_with_the_time_model_off_a_tie_is_not_called_as_fast(capsys):
    """Nothing is timed with --time-model off: the why line said 'as fast as 1 more'."""
    from rankmap.cli import main
    assert main(["compare", "-m", "torus:4x4x4", "-p", "stencil:4x4", "--mappings",
                 "inorder,TXYZ,rcb", "--time-model", "off"]) == 0
    why = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("why:")][0]
    assert "tied with 1 more" in why and "as fast" not in why
