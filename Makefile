# latscope: two entry points on a fresh machine.
#   make demo   sets up and runs the simulated demo (the main job)
#   make test   sets up and runs the tests (what CI runs)
PYTHON := .venv/bin/python

.PHONY: setup demo test bench clean

setup:
	@scripts/setup.sh

demo: setup
	$(PYTHON) -m latscope.demo

test: setup
	$(PYTHON) -m pytest -q

bench: setup
	$(PYTHON) bench/parser_throughput.py
	$(PYTHON) bench/link_efficiency.py

clean:
	rm -rf build sim/build .pytest_cache
