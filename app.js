// Run in the page at load. It mends Gradio's markup where a keyboard or a
// screen reader needs it, again whenever Gradio draws it anew:
// - the status lines are marked as live regions;
// - a question in the chat can be focused: Gradio picks its turn for the
//   correction box and the thumbs on a click or on Enter, but only a mouse
//   could reach it;
// - a rewrite step's title (its toggle) says whether it is open, and the
//   arrow inside it, a second and unnamed button, is left to the title;
// - so does the metrics panel's title, whose "▼" was read out in its name;
// - the chat's thumbs say what they rate (the rewrite), where they were
//   "Like" and "Dislike" under the answer, and whether they are pressed
//   (Gradio only filled the icon and renamed it "Liked"), and so do the
//   Rewrite panel's, for the turn the correction box shows (its class says
//   how that turn was judged); a list's arrow is not an image;
// - the chat's trash is named for what it does, a new conversation (the
//   one shown stays under "Your conversations"), where "Clear" said it
//   deleted it;
// - Space works those two as it works a button (Gradio answers Enter only);
// - an upload area is named after its field, where all were "Click to
//   upload or drop files", and so is its Clear;
// - the chat, a live region, is quiet while it is drawn anew;
// - a text box's help is its description, where it was read out as part
//   of its name each time the box was reached.
// It says why the server refused a call the page made past the queue
// (#cqa-refused), which Gradio's page leaves unsaid.
// It puts a "Skip to the question box" link first in the tab order (a
// keyboard user tabbed through the title's and the examples' stops first).
// It also watches the other tabs. Two tabs of one browser share the saved
// copy, and each writes all of its own conversations over it: a tab that
// saved after another tab did dropped that tab's new turns. The browser
// tells the other tabs of every such write (the "storage" event): this one
// hands the copy written, as the browser keeps it (encrypted), to the
// server (OTHER_COPY_ID), which opens it (open_browser_copy) and folds it
// into this tab's conversations (merge_saved), so that what this tab saves
// next keeps them. The page decrypted it itself before, with WebCrypto,
// which a browser gives only to a page served over https or from this
// machine: over plain http from another machine the tabs wrote over each
// other again. Where the server cannot read it, the page says to reload
// before going on (OTHER_TAB_UNREAD), which reads the shared copy back;
// what was typed in the boxes and not yet sent comes back after that
// reload (it was lost), each box's text once the box is drawn.
// The names it shares with the server come in ``config`` (app.py's page_js):
// status (the status lines' ids), after (each list's id: the control that
// takes the focus after a pick), drafts (the boxes kept across a reload),
// key (the saved copy's localStorage key), copy (the hidden box's id) and
// the status texts redrawn and unread.
(config) => {
  const QUESTIONS = "#chat [data-testid=user]", TITLES = "#chat .thought-group > .title[role=button]";
  const LISTS = Object.keys(config.after).map((id) => "#" + id).join(", ");
  let helps = 0;
  const box = (id) => document.querySelector(`#${id} textarea, #${id} input`);
  const drafts = JSON.parse(sessionStorage.getItem("cqa-drafts") || "{}");
  sessionStorage.removeItem("cqa-drafts");
  const mend = () => {
    for (const [id, text] of Object.entries(drafts)) {  // a tab's boxes are made when it is first opened
      const field = box(id);
      if (!field) continue;
      delete drafts[id];
      field.value = String(text);
      field.dispatchEvent(new Event("input", {bubbles: true}));  // Gradio's value follows
    }
    for (const id of config.status) {
      const line = document.getElementById(id);  // a tab's lines are made when it is first opened
      if (line && !line.hasAttribute("role")) line.setAttribute("role", "status");
    }
    for (const question of document.querySelectorAll(QUESTIONS)) {
      if (!question.hasAttribute("tabindex")) {
        question.tabIndex = 0;
        question.setAttribute("role", "button");
        question.setAttribute("aria-description", "Picks this turn to correct or rate its rewrite");
      }
      // Gradio names it by its Markdown source, backslashes and all: its text names it instead.
      if (question.hasAttribute("aria-label")) question.removeAttribute("aria-label");
    }
    for (const title of document.querySelectorAll(TITLES)) {
      const open = String(title.classList.contains("expanded"));
      if (title.getAttribute("aria-expanded") !== open) title.setAttribute("aria-expanded", open);
      const arrow = title.querySelector("button");
      if (arrow && arrow.tabIndex !== -1) {
        arrow.tabIndex = -1;
        arrow.setAttribute("aria-hidden", "true");
      }
    }
    for (const [thumb, name] of [["Like", "Rewrite correct"], ["Dislike", "Rewrite wrong"]]) {
      for (const pressed of [false, true]) {
        for (const button of document.querySelectorAll(`#chat button[aria-label=${thumb}${pressed ? "d" : ""}]`)) {
          button.setAttribute("aria-label", name);
          button.title = name;
          button.setAttribute("aria-pressed", String(pressed));
        }
      }
    }
    const judged = document.getElementById("correction")?.className.match(/cqa-judged-(up|down)/)?.[1];
    for (const way of ["up", "down"]) {
      const thumb = document.getElementById("thumbs-" + way), pressed = String(judged === way);
      if (thumb && thumb.getAttribute("aria-pressed") !== pressed) thumb.setAttribute("aria-pressed", pressed);
    }
    for (const trash of document.querySelectorAll("#chat button[aria-label=Clear]")) {
      trash.setAttribute("aria-label", "New conversation");
      trash.title = "New conversation (this one stays under Your conversations)";
    }
    const said = document.querySelector("#cqa-status [data-testid=markdown]")?.textContent ?? "";  // not the timer
    if (said !== lastSaid) {
      lastSaid = said;
      if (said.includes(config.redrawn)) quiet = true;  // another tab's save drew the chat anew
      if (said.includes(config.unread)) askReload();
    }
    for (const arrow of document.querySelectorAll("svg.dropdown-arrow:not([aria-hidden])")) arrow.setAttribute("aria-hidden", "true");
    for (const toggle of document.querySelectorAll("button.label-wrap")) {  // an accordion's
      const open = String(toggle.classList.contains("open"));
      if (toggle.getAttribute("aria-expanded") !== open) toggle.setAttribute("aria-expanded", open);
      toggle.querySelector(".icon:not([aria-hidden])")?.setAttribute("aria-hidden", "true");
    }
    for (const help of document.querySelectorAll("label > .info-text:not([id])")) {
      const title = help.parentElement.querySelector("[data-testid=block-info]");
      const box = help.parentElement.querySelector("textarea, input");
      if (!title || !box) continue;
      help.id = "cqa-help-" + ++helps;
      title.id ||= help.id + "-title";
      box.setAttribute("aria-labelledby", title.id);
      box.setAttribute("aria-describedby", help.id);
    }
    for (const area of document.querySelectorAll("button[aria-label='Click to upload or drop files']")) {
      const field = fieldOf(area);
      if (field) area.setAttribute("aria-label", field + ": click to upload or drop files");
    }
    // Once a file is chosen, the upload area sits inside a button that does
    // nothing, named by an untranslated "common.upload"; its Clear says not what it clears.
    for (const holder of document.querySelectorAll("button[aria-label='common.upload']")) {
      holder.tabIndex = -1;
      holder.setAttribute("aria-label", (fieldOf(holder) || "Files") + ": add files");
    }
    for (const clear of document.querySelectorAll(".block:has(input[type=file]) button[aria-label=Clear]:not(.clear-status button)")) {
      const field = fieldOf(clear);
      if (field) clear.setAttribute("aria-label", field + ": clear");
    }
    speak();
  };
  const fieldOf = (control) => control.closest(".block")?.querySelector("[data-testid=block-label]")?.textContent.trim();
  // The chat is a live region, so that an answer is read out as it comes.
  // Drawn anew (a conversation chosen, read back at load, or brought up to
  // date by another tab's save) it read out the whole conversation: until
  // the next action elsewhere, the status line says what happened instead.
  let quiet = true, lastSaid = "";
  const speak = () => {
    const log = document.querySelector("#chat [role=log]"), live = quiet ? "off" : "polite";
    if (log && log.getAttribute("aria-live") !== live) log.setAttribute("aria-live", live);
  };
  const acted = (target) => {
    quiet = Boolean(target.closest("#conversations"));
    speak();
  };
  document.addEventListener("click", (event) => { if (event.target instanceof Element) acted(event.target); }, true);
  const askReload = () => {
    if (document.getElementById("cqa-other-tab")) return;
    const note = document.createElement("div");
    note.id = "cqa-other-tab";
    note.setAttribute("role", "alert");
    note.textContent = "Your conversations were changed in another tab of this browser, and this page could not " +
      "read them. Reload this page to see them (what you typed is kept): what this page saves next would replace them.";
    const reload = document.createElement("button");
    reload.textContent = "Reload";
    reload.onclick = () => {
      const typed = Object.fromEntries(config.drafts.map((id) => [id, box(id)?.value]).filter(([, text]) => text));
      sessionStorage.setItem("cqa-drafts", JSON.stringify(typed));
      window.location.reload();
    };
    note.appendChild(reload);
    document.body.prepend(note);
  };
  // An event that skips the queue (Ask puts the question in line so) is a
  // direct call, which the server may refuse before the app runs it (the
  // visitor's share of such calls under way, a body too large): Gradio's
  // page reads the reason it gives ("error") and shows none of it, only a
  // red "Error" on the chat. The page says it above itself until such a
  // call goes through.
  const fetched = window.fetch;
  window.fetch = async (...args) => {
    const response = await fetched(...args);
    if (/\/run\/[^/?]+/.test(String(args[0]?.url ?? args[0]))) {
      const reason = response.ok ? null : await response.clone().json().then((body) => body?.error, () => null);
      refused(typeof reason === "string" ? reason : "");
    }
    return response;
  };
  const refused = (reason) => {
    let note = document.getElementById("cqa-refused");
    if (!reason) return note?.remove();
    if (!note) {
      note = document.createElement("div");
      note.id = "cqa-refused";
      note.setAttribute("role", "alert");
      document.body.prepend(note);
    }
    note.textContent = reason;
  };
  const skip = document.createElement("a");
  skip.id = "cqa-skip";
  skip.href = "#question";
  skip.textContent = "Skip to the question box";
  skip.addEventListener("click", (event) => {
    event.preventDefault();
    document.querySelector("#question textarea")?.focus();
  });
  document.body.prepend(skip);
  mend();
  new MutationObserver(mend).observe(document.body, {childList: true, subtree: true, attributes: true,
                                                     attributeFilter: ["class", "aria-label"]});
  let picked = null;
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (!(target instanceof Element)) return;
    picked = event.key === "Enter" ? target.closest(LISTS)?.id ?? null : null;
    if (event.key === "Enter") acted(target);
    if (event.key === " " && target.matches(QUESTIONS + ", " + TITLES)) {
      event.preventDefault();
      target.click();
    }
  }, true);
  document.addEventListener("focusout", (event) => {
    const next = picked && !event.relatedTarget ? document.querySelector(config.after[picked]) : null;
    picked = null;
    if (next) setTimeout(() => { if (document.activeElement === document.body) next.focus(); });
  }, true);
  window.addEventListener("storage", (event) => {
    const field = box(config.copy);
    if (event.key !== config.key || event.newValue === null || !field) return;
    field.value = event.newValue;
    field.dispatchEvent(new Event("input", {bubbles: true}));  // Gradio's value follows, and its change event
  });
}
