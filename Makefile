# rankmap developer entry points. Every target creates .venv on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench install clean fidelity fuzz

$(STAMP): pyproject.toml
	@$(PYTHON) -m venv $(VENV) || { echo "error: '$(PYTHON) -m venv' failed; on Debian run: apt-get install python3-venv" >&2; exit 1; }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@if command -v mpicc >/dev/null 2>&1; then echo 'MPI found: installing mpi4py'; $(PY) -m pip install -q -e '.[test,mpi]'; fi
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/rankmap demo

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/run_all.py $(ONLY)

# predicted vs SimGrid SMPI simulated time; needs smpicc/smpirun (libsimgrid-dev simgrid)
fidelity: $(STAMP)
	$(PY) benchmarks/fidelity/run.py --timeout $(or $(FIDELITY_TIMEOUT),300)

# long fuzz profile: FUZZ_COUNT generated and mutated inputs against the error contract, each in
# a forked child of one fork server, 1 in 100 also through the installed rankmap script
# (tests/fuzz/run.py; failures in fuzz-failures.jsonl, totals in fuzz-summary.json).
# `make test` runs a fast profile.
fuzz: $(STAMP)
	nice -n 10 $(PY) -m tests.fuzz.run --count $(or $(FUZZ_COUNT),100000) --seed $(or $(FUZZ_SEED),1)

clean:
	rm -rf $(VENV) rankmap-demo build src/*.egg-info
