# The Hugging Face Space (README front matter: sdk: docker, app_port: 7860).
# It installs exactly what `make run` installs, with the same script
# (scripts/install.sh), and starts `python app.py`. scripts/check_space.py
# replays these steps on a machine without Docker; keep every install step a
# RUN line that uses $HOME, not a literal path, so it can.
FROM python:3.11-slim

# A Space runs the container as user 1000; the venv, the pip cache and the
# app's cache (index, converted SmolLM2) live in that user's home.
RUN useradd -m -u 1000 user
USER user
ENV HOME=/home/user
ENV PATH=$HOME/venv/bin:$PATH
WORKDIR $HOME/app

# The install comes before the code, so that a change to the code alone
# reuses the installed layer.
COPY --chown=user requirements.txt ./
COPY --chown=user scripts/install.sh scripts/
RUN scripts/install.sh $HOME/venv && rm -rf $HOME/.cache/pip

COPY --chown=user . .

# The Space's proxy reaches the app on 0.0.0.0:7860. No telemetry and no
# downloads at run time: every model comes from an installed package.
ENV GRADIO_SERVER_NAME=0.0.0.0
ENV PORT=7860
ENV GRADIO_ANALYTICS_ENABLED=False
ENV HF_HUB_DISABLE_TELEMETRY=1
ENV HF_HUB_OFFLINE=1
ENV TRANSFORMERS_OFFLINE=1
EXPOSE 7860
CMD ["python", "app.py"]
