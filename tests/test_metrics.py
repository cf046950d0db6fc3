"""Plateau point, per-phase metrics and how phases combine."""

import numpy as np
import pytest

from rankmap.errors import RankmapError
from rankmap.metrics import combine, phase_metrics, plateau_point, ranking_key


def test_plateau_point_on_known_arrays():
    v = np.arange(100.0)
    assert plateau_point(v, 0.99) == 98          # 99 of 100 links carry <= 98
    assert plateau_point(v, 1.0) == 99           # y = 1 is the busiest link
    assert plateau_point([4, 1, 3, 2], 0.5) == 2
    assert plateau_point([4, 1, 3, 2], 0.51) == 3
    assert plateau_point(np.r_[np.zeros(990), np.full(10, 7.0)], 0.99) == 0
    assert plateau_point(np.r_[np.zeros(989), np.full(11, 7.0)], 0.99) == 7
    with pytest.raises(RankmapError):
        plateau_point(v, 0)


def test_phase_metrics_and_combine():
    a = phase_metrics(np.array([0, 2, 4.0]), np.array([0, 1, 2]), np.array([1.0, 3.0]),
                      np.array([1.0, 1.0]), y=1.0)
    assert a == {"max_link_streams": 2, "max_link_bytes": 4, "mean_link_bytes": 2,
                 "avg_hops": 2.0, "hop_bytes": 4.0, "plateau_bytes": 4, "flows": 2}
    b = dict(a, max_link_bytes=10.0, avg_hops=0.5, flows=6, mean_link_bytes=1.0)
    c = combine([a, b])
    assert c["max_link_bytes"] == 10 and c["mean_link_bytes"] == 3
    assert c["avg_hops"] == pytest.approx((2 * 2 + 0.5 * 6) / 8) and c["hop_bytes"] == 8


def test_ranking_prefers_time_then_busiest_link():
    assert ranking_key({"max_link_bytes": 1, "hop_bytes": 9}) < ranking_key({"max_link_bytes": 2, "hop_bytes": 1})
    assert ranking_key({"max_link_bytes": 1, "hop_bytes": 2}) < ranking_key({"max_link_bytes": 1, "hop_bytes": 3})
    assert ranking_key({"predicted_time_s": 1, "max_link_bytes": 9, "hop_bytes": 9}) < \
        ranking_key({"predicted_time_s": 2, "max_link_bytes": 1, "hop_bytes": 1})


def test_equal_times_up_to_float_noise_fall_back_to_links():
    a = {"predicted_time_s": 0.029608 + 1e-17, "max_link_bytes": 1, "hop_bytes": 5}
    b = {"predicted_time_s": 0.029608, "max_link_bytes": 1, "hop_bytes": 9}
    assert ranking_key(a) < ranking_key(b)
