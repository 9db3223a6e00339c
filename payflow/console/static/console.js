// payflow console: drag-and-drop into the file input, live progress, group checkboxes.
"use strict";

function setUpDrop() {
  const drop = document.getElementById("drop");
  const input = document.getElementById("file");
  if (!drop || !input) return;
  const show = () => {
    const name = input.files.length ? input.files[0].name : "";
    drop.querySelector("span").textContent = name ? "Chosen: " + name : drop.dataset.hint;
  };
  drop.dataset.hint = drop.querySelector("span").textContent;
  ["dragenter", "dragover"].forEach((type) => drop.addEventListener(type, (event) => {
    event.preventDefault();
    drop.classList.add("over");
  }));
  ["dragleave", "drop"].forEach((type) => drop.addEventListener(type, () => drop.classList.remove("over")));
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    if (event.dataTransfer && event.dataTransfer.files.length) {
      input.files = event.dataTransfer.files;
      show();
    }
  });
  input.addEventListener("change", show);
}

function setUpProgress() {
  const box = document.getElementById("progress");
  if (!box || box.dataset.running !== "yes") return;
  const body = document.querySelector("#states tbody");
  const bar = document.getElementById("bar");
  const line = document.getElementById("final-line");
  const state = document.getElementById("state");
  const tick = async () => {
    let data;
    try {
      const response = await fetch(box.dataset.url, {headers: {"Accept": "application/json"}});
      if (!response.ok) throw new Error(String(response.status));
      data = await response.json();
    } catch (error) {
      line.textContent = "progress unavailable, retrying…";
      setTimeout(tick, 2000);
      return;
    }
    body.replaceChildren(...data.states.map(([name, words, n]) => {
      const row = document.createElement("tr");
      row.dataset.state = name;
      const a = document.createElement("td"); a.textContent = words;
      const b = document.createElement("td"); b.textContent = n; b.className = "num";
      row.append(a, b);
      return row;
    }));
    bar.max = data.to_pay || 1;
    bar.value = data.to_pay_final;
    line.textContent = data.final_line;
    state.textContent = data.state;
    if (data.running) {
      setTimeout(tick, 1000);
    } else {
      box.dataset.running = "done";
      location.reload();  // the summary, findings and failed groups are rendered by the server
    }
  };
  setTimeout(tick, 500);
}

function setUpGroups() {
  document.querySelectorAll(".group-toggle").forEach((toggle) => {
    toggle.addEventListener("change", () => {
      document.querySelectorAll('.row-box[data-group="' + toggle.dataset.group + '"]')
        .forEach((box) => { box.checked = toggle.checked; });
    });
  });
}

document.addEventListener("DOMContentLoaded", () => {
  setUpDrop();
  setUpProgress();
  setUpGroups();
});
