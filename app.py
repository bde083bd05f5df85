"""The browser app: ``python app.py [--port N] [--host H]``.

This file only wires the UI: it builds the Gradio Blocks and connects each
control to a function of :mod:`assistant.session`, which holds the logic
(one :class:`~assistant.session.Session` per browser tab, in a ``gr.State``).
The chat is also an API: ``Client(URL).predict("Who was Ada Lovelace?",
api_name="/chat")`` (see the README).
"""

from __future__ import annotations

import os

# Before gradio and huggingface_hub are imported: no telemetry, no downloads.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import argparse
import functools
import logging
import sys
import tempfile
import threading

import gradio as gr

from assistant import session as S
from assistant.kernel import AssistantError

__all__ = ["build_app", "serve", "main"]

log = logging.getLogger("convqa.app")

# Two cores: two turns at once keep both busy; more would only slow each one.
TURN_CONCURRENCY = 2

CSS = """
#cqa-header h1 {margin-bottom: 0}
#cqa-header p {margin-top: 4px; color: var(--body-text-color-subdued)}
.cqa-answer .cqa-text {font-size: 1.02em; margin: 0 0 6px 0}
.cqa-answer ul.cqa-sources, .cqa-answer ol.cqa-sources {margin: 4px 0; padding-left: 1.2em}
.cqa-answer ul.cqa-used {list-style: "📄 "}
.cqa-answer .cqa-title {font-weight: 600}
.cqa-score {font-size: 0.8em; color: var(--body-text-color-subdued); margin-left: 4px}
.cqa-passage {font-size: 0.88em; line-height: 1.45; margin: 2px 0 8px 0; color: var(--body-text-color-subdued)}
.cqa-passage mark {background: #fde68a; color: #1f2937; padding: 0 2px; border-radius: 3px}
.cqa-answer details summary {cursor: pointer; font-size: 0.88em; color: var(--link-text-color)}
.cqa-notice {background: #fff7ed; border-left: 3px solid #f97316; padding: 4px 8px; font-size: 0.9em}
.cqa-choice li.cqa-chosen {font-weight: 600}
#cqa-status p {margin: 2px 0; font-size: 0.92em}
"""

EXAMPLES = ["Who was Ada Lovelace?", "What did she write about?", "Who was her father?"]


class LiveMetrics:
    """QReCC's live rewrite metrics for :attr:`assistant.session.Services.scorer`:
    ROUGE-1 recall, USE similarity and R@10 of the system's rewrite against a
    reference. Injected from here because nothing in assistant/ imports eval/."""

    names = S.METRICS

    def __init__(self):
        self._use = None
        self._lock = threading.Lock()

    def load(self):
        """The USE encoder, loaded once (sessions score from several threads)."""
        with self._lock:
            if self._use is None:
                from assistant.encoders import load_use

                self._use = load_use()
        return self._use

    def __call__(self, reference: str, candidate: str, retriever) -> dict[str, float]:
        from eval.metrics import embedding_similarity, r_at_k, rouge1_recall

        return {
            "ROUGE-1 R": rouge1_recall(reference, candidate),
            "USE": embedding_similarity(self.load(), reference, candidate),
            "R@10": r_at_k(retriever, reference, candidate, k=10),
        }


@functools.cache
def live_metrics() -> LiveMetrics:
    """One :class:`LiveMetrics` per process: USE is loaded once."""
    return LiveMetrics()


def _plot(session: S.Session, metrics=S.METRICS):
    """The running mean of each metric across turns, drawn on the server
    (matplotlib's object API: no global pyplot state shared between sessions)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    points = S.metrics_points(session, metrics)
    figure = Figure(figsize=(4.8, 2.5), dpi=110)
    axes = figure.add_subplot()
    for metric, color in zip(metrics, ("#2563eb", "#f59e0b", "#10b981")):
        mine = [p for p in points if p["metric"] == metric]
        axes.plot([p["turn"] for p in mine], [p["mean"] for p in mine], marker="o", ms=3, color=color, label=metric)
    axes.set_ylim(0, 1.05)
    axes.set_xlabel("turn", fontsize=8)
    axes.set_ylabel("running mean", fontsize=8)
    axes.tick_params(labelsize=7)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)
    if points:
        axes.legend(loc="lower left", fontsize=7, frameon=False, ncols=3)
    else:
        axes.set_xticks([])
        axes.text(0.5, 0.5, "no scored turn yet", ha="center", va="center", transform=axes.transAxes, color="gray")
    figure.tight_layout()
    return figure


def _status(text: str, error: bool = False) -> str:
    # Status texts quote user input: escaped like everything else shown.
    return ("⚠️ " if error else "") + S.escape_markdown(text)


def build_app(services: S.Services, *, export_dir: str | None = None) -> gr.Blocks:
    """The Blocks for ``services`` (loaded once, shared by all sessions)."""
    export_dir = export_dir or tempfile.mkdtemp(prefix="convqa-export-")
    if services.scorer is None:  # the app always shows the live metrics
        services.scorer, services.metrics = live_metrics(), LiveMetrics.names

    def views(session, status="", pending=None):
        if pending is not None:
            # Mid-turn only the chat changes; re-sending the plot at every
            # streamed step can leave it half drawn.
            return S.chat_messages(session, pending), status, gr.skip(), gr.skip(), gr.skip(), session
        return (
            S.chat_messages(session),
            status,
            S.metrics_rows(session, services.metrics),
            _plot(session, services.metrics),
            correction_box(session),
            session,
        )

    def correction_box(session):
        index = S.target_turn(session)
        if index < 0:
            return gr.update(value="", label="Correct the rewrite (ask a question first)")
        return gr.update(
            value=session.turns[index].turn.rewrite.text,
            label=f"Correct the rewrite of turn {index + 1}" + (" (the last)" if index == len(session.turns) - 1 else ""),
        )

    def attempt(action):
        """``(result, None)``, or ``(None, message)`` when ``action`` failed: an
        AssistantError's own message, or for a bug a short apology (logged)."""
        try:
            return action(), None
        except AssistantError as error:
            return None, str(error)
        except Exception as error:  # the UI edge: the session must keep working
            log.exception("unexpected error")
            return None, f"Something went wrong ({type(error).__name__}); please try again."

    def run(action):
        """The status line after ``action`` (which returns a message)."""
        message, error = attempt(action)
        return _status(error, error=True) if error else _status(message)

    def stream(session, steps, done: str):
        """Yield the views after each stage of a streamed turn (``steps`` yields
        Pending values); a failure at any stage ends it with its message."""
        while True:
            pending, error = attempt(lambda: next(steps, None))
            if error:
                yield views(session, _status(error, error=True))
                return
            if pending is None:
                break
            yield views(session, "", pending)
        yield views(session, _status(done))

    def on_ask(question, session):
        notice = S.language_notice(question or "")
        yield from stream(session, S.ask(services, session, question), notice)

    def on_rerun(corrected, session):
        return views(session, run(lambda: S.correct(services, session, S.target_turn(session), corrected)))

    def on_like(session, data: gr.LikeData):
        index = data.index[0] if isinstance(data.index, (list, tuple)) else data.index
        if data.liked not in (True, False, "Like", "Dislike"):  # a thumb clicked off again
            return views(session, _status("Judgement cleared here; a line already written stays in the labels file."))
        label = 1 if data.liked in (True, "Like") else 0
        return views(session, run(lambda: S.judge(services, session, S.turn_of_message(index), label)))

    def on_thumb(label):
        def handler(session):
            return views(session, run(lambda: S.judge(services, session, S.target_turn(session), label)))

        return handler

    def on_select(session, data: gr.SelectData):
        index = data.index[0] if isinstance(data.index, (list, tuple)) else data.index
        turn, error = attempt(lambda: S.select_turn(session, index))
        status = _status(error, error=True) if error else _status(
            f"Turn {turn + 1} selected: correct or rate its rewrite under Rewrite."
        )
        return correction_box(session), status, session

    def on_undo(session):
        return views(session, run(lambda: S.undo(session)))

    def on_new(session):
        return views(session, run(lambda: S.new_conversation(session)))

    def on_export(session):
        path, error = attempt(lambda: S.write_export(session, export_dir))
        if error:
            return gr.update(visible=False), _status(error, error=True)
        return gr.update(value=str(path), visible=True), _status(f"Exported {len(session.turns)} turns.")

    def on_replay_load(upload, path, session):
        source = upload or (path or "").strip()
        if not source:
            return gr.update(), _status("Upload a QReCC, CANARD or CAsT file, or give its path.", error=True), session
        name = os.path.basename(upload) if upload else None
        ids, error = attempt(lambda: S.load_replay(session, upload or S.shared_data_file(path), name))
        if error:
            return gr.update(choices=[], value=None), _status(error, error=True), session
        return gr.update(choices=ids, value=ids[0]), _status(f"Loaded {len(ids)} conversations: pick one and press Start."), session

    def on_replay_start(conversation_id, session):
        return views(session, run(lambda: S.start_replay(session, conversation_id or "")))

    def on_replay_next(session):
        yield from stream(session, S.replay_step(services, session), _replay_status(session))

    def on_replay_all(session):
        def steps():
            while session.replay is not None and session.replay.conversation_id and session.replay.remaining() > 0:
                yield from S.replay_step(services, session)

        yield from stream(session, steps(), "Replay finished.")

    def _replay_status(session):
        replay = session.replay
        if replay is None or not replay.conversation_id:
            return ""
        left = replay.remaining() - 1
        return f"{left} turn{'s' if left != 1 else ''} left to replay." if left > 0 else "Replay finished."

    def on_upload(files, session, progress=gr.Progress(track_tqdm=True)):
        paths = [f if isinstance(f, str) else f.name for f in (files or [])]
        status = run(lambda: S.use_uploads(services, session, paths))
        return status, _status(S.source_status(services, session)), session

    def on_document(file, text, title, session):
        def choose():
            if file:
                return S.use_document_file(session, file if isinstance(file, str) else file.name)
            if (text or "").strip():
                return S.use_document(session, text, "your text")
            return S.use_collection_document(services, session, title)

        return run(choose), _status(S.source_status(services, session)), session

    def on_default(session):
        return run(lambda: S.use_default_collection(services, session)), _status(S.source_status(services, session)), session

    def on_choice(document, question, a, b, c, d, session):
        result, error = attempt(lambda: S.multiple_choice(services, session, document, question, [a, b, c, d]))
        return (S.notice_html(error) if error else S.choice_html(*result)), session

    def api_chat(question, session):
        return S.ask_json(services, session, question), session

    def api_new(session):
        S.new_conversation(session)
        return {"conversation": session.conversation_no}, session

    with gr.Blocks(title="Conversational QA · question rewriting", fill_width=False) as demo:
        session = gr.State(S.Session(), delete_callback=lambda s: s.close() if s is not None else None)
        gr.Markdown(
            "# Conversational question answering\n"
            "Each question is first **rewritten** into a self-contained one (🔁, click to expand), "
            "then answered from the sources shown with it. Rate a rewrite with 👍/👎 or correct it.",
            elem_id="cqa-header",
        )
        with gr.Row(equal_height=False):
            with gr.Column(scale=3, min_width=420):
                source_md = gr.Markdown(_status(S.source_status(services, S.Session())), elem_id="cqa-source")
                chatbot = gr.Chatbot(
                    label="Conversation",
                    show_label=False,
                    elem_id="chat",
                    height=720,
                    latex_delimiters=[],
                    feedback_options=("Like", "Dislike"),
                    buttons=["copy"],
                    placeholder="Ask about anything in the collection, e.g. **Who was Ada Lovelace?** and then "
                    "**What did she write about?**",
                )
                with gr.Row():
                    question = gr.Textbox(
                        show_label=False, placeholder="Ask a question…", scale=6, elem_id="question", autofocus=True
                    )
                    ask_btn = gr.Button("Ask", variant="primary", scale=1, elem_id="ask", min_width=80)
                status = gr.Markdown("", elem_id="cqa-status")
                gr.Examples(EXAMPLES, inputs=question, label="Try")
                with gr.Row():
                    new_btn = gr.Button("🆕 New conversation", size="sm", elem_id="new")
                    undo_btn = gr.Button("↩️ Undo last turn", size="sm", elem_id="undo")
                    export_btn = gr.Button("⬇️ Export JSON (QReCC)", size="sm", elem_id="export")
                export_file = gr.File(label="Exported conversation", visible=False, elem_id="export-file")
            with gr.Column(scale=2, min_width=340):
                with gr.Tabs():
                    with gr.Tab("Rewrite", id="rewrite"):
                        correction = gr.Textbox(
                            label="Correct the rewrite (ask a question first)",
                            info="Click a turn in the chat to pick it (default: the last). Edit the self-contained "
                            "question and re-run the turn with it; your correction becomes the reference the "
                            "metrics compare with.",
                            lines=2,
                            elem_id="correction",
                        )
                        rerun_btn = gr.Button("Re-run with this rewrite", elem_id="rerun")
                        with gr.Row():
                            up_btn = gr.Button("👍 Rewrite correct", size="sm", elem_id="thumbs-up")
                            down_btn = gr.Button("👎 Rewrite wrong", size="sm", elem_id="thumbs-down")
                        gr.Markdown(
                            f"Judgements are appended to `{services.labels.path}` for "
                            "`python -m eval.rewrites validate`."
                        )
                    with gr.Tab("Replay", id="replay"):
                        gr.Markdown(
                            "Replay a conversation from a **QReCC, CANARD or CAsT** file: its questions are asked "
                            "turn by turn (rewritten with the file's own history) and the human rewrite is shown "
                            "beside ours, scored live."
                        )
                        replay_file = gr.File(label="Conversations file (.json)", file_types=[".json"], type="filepath",
                                              elem_id="replay-file")
                        replay_path = gr.Textbox(label="…or a path on the server", elem_id="replay-path")
                        replay_load = gr.Button("Load", elem_id="replay-load")
                        replay_pick = gr.Dropdown(label="Conversation", choices=[], elem_id="replay-pick",
                                                  allow_custom_value=False)
                        with gr.Row():
                            replay_start = gr.Button("Start", elem_id="replay-start")
                            replay_next = gr.Button("▶ Next turn", elem_id="replay-next")
                            replay_all = gr.Button("⏩ Play all", elem_id="replay-all")
                    with gr.Tab("Your documents", id="documents"):
                        gr.Markdown(
                            f"**Upload** .txt, .md, .html, .pdf files or a JSONL collection (`id`, `contents`, "
                            f"optional `title`, `url`); up to {services.limits.max_files} files, "
                            f"{services.limits.max_file_mb:g} MB each, {services.limits.max_total_mb:g} MB in all. "
                            "They are indexed for this session only."
                        )
                        uploads = gr.File(label="Documents", file_count="multiple", type="filepath",
                                          file_types=[".txt", ".md", ".html", ".htm", ".pdf", ".jsonl"],
                                          elem_id="uploads")
                        index_btn = gr.Button("Index and answer from these", elem_id="index-uploads")
                        gr.Markdown(
                            "**One document** (a conversation about one text, as in CoQA): upload a file, paste "
                            "text, or name an article of the collection."
                        )
                        doc_file = gr.File(label="Document", type="filepath",
                                           file_types=[".txt", ".md", ".html", ".htm", ".pdf"], elem_id="doc-file")
                        doc_text = gr.Textbox(label="…or paste its text", lines=4, elem_id="doc-text")
                        doc_title = gr.Textbox(label="…or an article title", placeholder="Ada Lovelace",
                                               elem_id="doc-title")
                        doc_btn = gr.Button("Converse about this document", elem_id="use-document")
                        default_btn = gr.Button("Back to the default collection", size="sm", elem_id="use-default")
                        docs_status = gr.Markdown("", elem_id="docs-status")
                    with gr.Tab("Multiple choice", id="choice"):
                        gr.Markdown(
                            "Ask a multiple-choice question about a long document (QuALITY's setting). Leave the "
                            "document empty to use the one chosen under *Your documents*."
                        )
                        mc_doc = gr.Textbox(label="Document", lines=5, elem_id="mc-doc")
                        mc_question = gr.Textbox(label="Question", elem_id="mc-question")
                        mc_options = [gr.Textbox(label=f"({letter})", elem_id=f"mc-{letter.lower()}")
                                      for letter in "ABCD"]
                        mc_btn = gr.Button("Choose", variant="primary", elem_id="mc-choose")
                        mc_result = gr.HTML(elem_id="mc-result")
                with gr.Accordion("📈 Live rewrite quality", open=True, elem_id="metrics-panel"):
                    gr.Markdown(
                        "For turns with a reference rewrite (replayed, or your correction): ROUGE-1 recall, USE "
                        "similarity and R@10 of the system's rewrite against it."
                    )
                    metrics_table = gr.Dataframe(
                        headers=["turn", *services.metrics], datatype=["str", *["number"] * len(services.metrics)],
                        interactive=False, elem_id="metrics-table", wrap=True,
                    )
                    metrics_plot = gr.Plot(_plot(S.Session(), services.metrics), show_label=False, elem_id="metrics-plot")

        turn_outputs = [chatbot, status, metrics_table, metrics_plot, correction, session]
        turn_events = {"concurrency_limit": TURN_CONCURRENCY, "concurrency_id": "turn", "api_visibility": "private"}
        light = {"concurrency_limit": None, "api_visibility": "private"}
        # The box is emptied as the question is taken, so that a question typed
        # while the previous turn still streams is never wiped.
        asked = gr.State("")
        for trigger in (question.submit, ask_btn.click):
            trigger(lambda q: ("", q), [question], [question, asked], queue=False, api_visibility="private").then(
                on_ask, [asked, session], turn_outputs, **turn_events
            )
        rerun_btn.click(on_rerun, [correction, session], turn_outputs, **turn_events)
        chatbot.like(on_like, [session], turn_outputs, **light)
        chatbot.select(on_select, [session], [correction, status, session], **light)
        up_btn.click(on_thumb(1), [session], turn_outputs, **light)
        down_btn.click(on_thumb(0), [session], turn_outputs, **light)
        undo_btn.click(on_undo, [session], turn_outputs, **light)
        new_btn.click(on_new, [session], turn_outputs, **light)
        chatbot.clear(on_new, [session], turn_outputs, **light)
        export_btn.click(on_export, [session], [export_file, status], **light)
        replay_load.click(on_replay_load, [replay_file, replay_path, session], [replay_pick, status, session], **light)
        replay_start.click(on_replay_start, [replay_pick, session], turn_outputs, **light)
        replay_next.click(on_replay_next, [session], turn_outputs, **turn_events)
        replay_all.click(on_replay_all, [session], turn_outputs, **turn_events)
        source_outputs = [docs_status, source_md, session]
        index_btn.click(on_upload, [uploads, session], source_outputs, **turn_events)
        doc_btn.click(on_document, [doc_file, doc_text, doc_title, session], source_outputs, **turn_events)
        default_btn.click(on_default, [session], source_outputs, **light)
        mc_btn.click(on_choice, [mc_doc, mc_question, *mc_options, session], [mc_result, session], **turn_events)

        # The API (gradio_client): one JSON object per turn, the session kept per client.
        api_question = gr.Textbox(visible=False)
        api_result = gr.JSON(visible=False)
        api_chat_btn = gr.Button(visible=False)
        api_new_btn = gr.Button(visible=False)
        api_chat_btn.click(api_chat, [api_question, session], [api_result, session], api_name="chat",
                           concurrency_limit=TURN_CONCURRENCY, concurrency_id="turn")
        api_new_btn.click(api_new, [session], [api_result, session], api_name="new", concurrency_limit=None)
    demo.queue(default_concurrency_limit=TURN_CONCURRENCY, max_size=128)
    return demo


def serve(demo: gr.Blocks, host: str = "127.0.0.1", port: int = 7860, **launch):
    """Launch ``demo`` with the app's look (tests pass prevent_thread_lock=True)."""
    return demo.launch(server_name=host, server_port=port, css=CSS, theme=gr.themes.Soft(), show_error=False, **launch)


def _parser() -> argparse.ArgumentParser:
    from assistant.kernel import AssistantConfig, RetrieverConfig, from_env

    defaults, retrieval = from_env(AssistantConfig()), from_env(RetrieverConfig())
    port = os.environ.get("PORT") or os.environ.get("GRADIO_SERVER_PORT") or "7860"
    parser = argparse.ArgumentParser(prog="python app.py", description="Serve the conversational QA demo.")
    parser.add_argument("--port", type=int, default=int(port), help="port (env PORT or GRADIO_SERVER_PORT; 7860)")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
                        help="interface to listen on (env GRADIO_SERVER_NAME; 127.0.0.1, use 0.0.0.0 to share)")
    parser.add_argument("--index", default=retrieval.index_dir, help="Lucene index folder (env CONVQA_INDEX_DIR)")
    parser.add_argument("--rewriter", default=defaults.rewriter,
                        help="trained | prompted | original | model path (env CONVQA_REWRITER)")
    parser.add_argument("--reader", default=defaults.reader, choices=["sentence", "generative"], help="answer reader")
    return parser


def main(argv: list[str] | None = None) -> int:
    import dataclasses

    from assistant.kernel import (
        AssistantConfig,
        ReaderConfig,
        RetrieverConfig,
        from_env,
    )
    from assistant.pipeline import Assistant
    from assistant.retrieval import ensure_index
    from assistant.session import LabelStore, remove_stale_sessions

    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # gradio polls itself at start
    try:
        index = ensure_index(args.index)
        assistant = Assistant.from_config(
            dataclasses.replace(from_env(AssistantConfig()), rewriter=args.rewriter, reader=args.reader),
            dataclasses.replace(from_env(RetrieverConfig()), index_dir=str(index)),
            from_env(ReaderConfig()),
        )
    except AssistantError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    remove_stale_sessions()
    metrics = live_metrics()
    services = S.Services(assistant, LabelStore(), scorer=metrics, metrics=metrics.names)
    # USE (for the live metrics) loads in the background instead of on the first scored turn.
    threading.Thread(target=metrics.load, name="load-use", daemon=True).start()
    serve(build_app(services), args.host, args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
