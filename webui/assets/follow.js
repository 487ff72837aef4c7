// bgcmd ui: follows a running job's output with server-sent events. Lines
// are added as text nodes (textContent), never parsed as HTML; the stream
// ends when the job settles.
(function () {
  "use strict";
  var box = document.getElementById("follow");
  var lines = document.getElementById("lines");
  var status = document.getElementById("follow-status");
  if (!box || !lines || !window.EventSource) { return; }
  var es = new EventSource(box.getAttribute("data-src"));
  function add(n, text) {
    var row = document.createElement("div");
    row.className = "line";
    var ln = document.createElement("span");
    ln.className = "ln";
    ln.textContent = String(n);
    var tx = document.createElement("span");
    tx.className = "tx";
    tx.textContent = text;
    row.appendChild(ln);
    row.appendChild(tx);
    lines.appendChild(row);
  }
  status.textContent = "Live: following new lines…";
  es.addEventListener("lines", function (ev) {
    var b = JSON.parse(ev.data);
    for (var i = 0; i < b.lines.length; i++) { add(b.first + i, b.lines[i]); }
  });
  es.addEventListener("end", function (ev) {
    var e = JSON.parse(ev.data);
    status.textContent = "The job settled (" + e.state + "): every line is shown.";
    box.setAttribute("data-state", e.state);
    es.close();
  });
  es.addEventListener("failed", function (ev) {
    status.textContent = "Follow stopped: " + JSON.parse(ev.data).error;
    es.close();
  });
  es.addEventListener("error", function () {
    if (box.getAttribute("data-state")) { return; }
    status.textContent = "Follow interrupted; reload to go on.";
    es.close();
  });
})();
