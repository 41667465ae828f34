// "Add to the index": uploads go to POST /api/add; the job table is refreshed from /api/jobs.
(function () {
  'use strict';
  var csrf = document.body.dataset.csrf;
  function el(tag, text) { var e = document.createElement(tag); if (text !== undefined) e.textContent = text; return e; }
  function progress(j) {
    if (j.state !== 'running' || !j.stage) return '';
    return j.stage + ': ' + j.done + (j.total ? ' / ' + j.total : '');
  }
  function refresh() {
    fetch('/api/jobs', { credentials: 'same-origin' }).then(function (r) { return r.json(); }).then(function (d) {
      var body = document.querySelector('#jobs tbody');
      body.textContent = '';
      d.jobs.forEach(function (j) {
        var tr = el('tr');
        tr.dataset.job = j.id;
        tr.dataset.state = j.state;
        [String(j.id), j.files.join(', '), j.state, progress(j), j.message].forEach(function (t) { tr.appendChild(el('td', t)); });
        body.appendChild(tr);
      });
    });
  }
  document.getElementById('add-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var files = document.getElementById('add-files').files;
    var err = document.getElementById('add-error');
    err.hidden = true;
    if (!files.length) { err.textContent = 'Choose one or more files.'; err.hidden = false; return; }
    var form = new FormData();
    for (var i = 0; i < files.length; i++) form.append('file', files[i], files[i].name);
    form.append('folder', document.getElementById('add-folder').value.trim());
    fetch('/api/add', { method: 'POST', body: form, headers: { 'X-CSRF-Token': csrf }, credentials: 'same-origin' })
      .then(function (r) { return r.json().then(function (d) { return [r.status, d]; }); })
      .then(function (x) {
        if (x[0] !== 202) { err.textContent = x[1].error || ('Error ' + x[0]); err.hidden = false; }
        document.getElementById('add-files').value = '';
        refresh();
      });
  });
  refresh();
  setInterval(refresh, 1000);
})();
