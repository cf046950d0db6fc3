"""Measured or simulated link counters: reading, per-phase statistics (PDF, CDF, plateau
point, percentiles) and the correlation of plateau x with time over placements (seed 000)."""

from .analysis import (DEFAULT_PERCENTILES, empirical_cdf, empirical_pdf, parse_percentiles,
                       phase_stats)
from .correlation import correlate, correlation_table, parse_sweep, read_times, sweep_phase
from .reader import ALL_PHASES, CounterPhase, CounterRun, read_counters, read_runs

__all__ = ["ALL_PHASES", "CounterPhase", "CounterRun", "DEFAULT_PERCENTILES", "correlate",
           "correlation_table", "empirical_cdf", "empirical_pdf", "parse_percentiles",
           "parse_sweep", "phase_stats", "read_counters", "read_runs", "read_times",
           "sweep_phase"]
