// The "Check documents" page: files (dropped or chosen) and pasted text go to POST /api/query;
// the rows come back as JSON and are put in the table with textContent (never as HTML).
(function () {
  'use strict';
  var csrf = document.body.dataset.csrf;
  var chosen = [];
  var last = null;
  var drop = document.getElementById('drop');
  var input = document.getElementById('files');
  var list = document.getElementById('chosen');

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function showChosen() {
    list.textContent = '';
    chosen.forEach(function (f) {
      list.appendChild(el('li', f.name + ' (' + (f.size / 1000).toFixed(1) + ' kB)'));
    });
  }
  function add(files) {
    for (var i = 0; i < files.length; i++) chosen.push(files[i]);
    showChosen();
  }
  input.addEventListener('change', function () { add(input.files); input.value = ''; });
  ['dragenter', 'dragover'].forEach(function (t) {
    drop.addEventListener(t, function (e) { e.preventDefault(); drop.classList.add('over'); });
  });
  ['dragleave', 'drop'].forEach(function (t) {
    drop.addEventListener(t, function (e) { e.preventDefault(); drop.classList.remove('over'); });
  });
  drop.addEventListener('drop', function (e) { add(e.dataTransfer.files); });

  function fail(message) {
    document.getElementById('progress').hidden = true;
    var p = document.getElementById('check-error');
    p.textContent = message;
    p.hidden = false;
  }
  function pct(x) { return x.toFixed(2); }
  // a percentage for a sentence, as simdask.read.undirected_pairs.pct writes it
  function said(x) {
    if (x >= 99.5 && x < 100) return x.toFixed(1) + ' %';
    var t = x >= 10 ? x.toFixed(0) : x.toFixed(1);
    if (t === '0.0' && x > 0) t = x >= 0.005 ? x.toFixed(2) : '<0.01';
    return t + ' %';
  }
  function inWords(r) {
    return r.key + ' holds ' + said(r.similarity) + ' of ' + r.query + '; ' + r.query +
      ' holds ' + said(r.reverse_similarity) + ' of ' + r.key;
  }
  function reportUrl(qid, row) {
    return '/check/' + encodeURIComponent(qid) + '/report?query=' +
      encodeURIComponent(row.query) + '&key=' + encodeURIComponent(row.key);
  }
  function show(data) {
    last = data;
    var body = document.querySelector('#results-table tbody');
    body.textContent = '';
    // the checked document's own share found in each source first (what a teacher reads)
    var rows = data.results.slice().sort(function (x, y) {
      return y.similarity - x.similarity || y.reverse_similarity - x.reverse_similarity;
    });
    var views = document.getElementById('views');
    views.textContent = '';
    data.queries.forEach(function (q) {
      if (!q.matches) return;
      var li = el('li');
      var a = el('a', q.key + ': the total found in other documents, every source marked in its text');
      a.href = '/check/' + encodeURIComponent(data.qid) + '/document?query=' +
        encodeURIComponent(q.key) + '&min=' + encodeURIComponent(data.min);
      a.className = 'doc-view';
      li.appendChild(a);
      views.appendChild(li);
    });
    rows.forEach(function (r) {
      var tr = el('tr');
      tr.dataset.key = r.query + ' ' + r.key;
      tr.appendChild(el('td', r.query));
      var td = el('td');
      var a = el('a', r.key);
      a.href = '/document?key=' + encodeURIComponent(r.key);
      td.appendChild(a);
      tr.appendChild(td);
      var own = el('td', pct(r.similarity), 'n');
      own.dataset.v = String(r.similarity);
      tr.appendChild(own);
      var back = el('td', pct(r.reverse_similarity), 'n');
      back.dataset.v = String(r.reverse_similarity);
      tr.appendChild(back);
      tr.appendChild(el('td', inWords(r)));
      tr.appendChild(el('td', String(r.shared), 'n'));
      tr.appendChild(el('td', String(r.doc_chunks), 'n'));
      var rep = el('td');
      var link = el('a', 'side by side', 'report');
      link.href = reportUrl(data.qid, r);
      link.target = '_blank';
      link.rel = 'noopener';
      rep.appendChild(link);
      tr.appendChild(rep);
      body.appendChild(tr);
    });
    var notes = document.getElementById('notes');
    notes.textContent = '';
    data.queries.forEach(function (q) {
      if (q.too_short) notes.appendChild(el('li', q.key + ': fewer than ' + data.k + ' words, no chunks'));
      else if (!q.matches) notes.appendChild(el('li', q.key + ': no match'));
    });
    // a scanned PDF (too short, image_only) is a note, as in the CLI; unreadable files are errors
    data.unreadable.forEach(function (u) {
      if (u.note) notes.appendChild(el('li', 'not compared: ' + u.message));
      else notes.appendChild(el('li', 'cannot read ' + u.message, 'error'));
    });
    document.getElementById('summary').textContent = data.summary +
      ' (' + data.seconds.toFixed(2) + ' s on the server).';
    document.getElementById('progress').hidden = true;
    document.getElementById('results').hidden = false;
  }

  document.getElementById('check-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var text = document.getElementById('text').value;
    if (!chosen.length && !text.trim()) { fail('Choose or drop a file, or paste text.'); return; }
    var form = new FormData();
    chosen.forEach(function (f) { form.append('file', f, f.name); });
    if (text.trim()) form.append('text', text);
    form.append('min', document.getElementById('min').value || '1');
    document.getElementById('check-error').hidden = true;
    document.getElementById('results').hidden = true;
    var bar = document.getElementById('bar');
    var label = document.getElementById('progress-text');
    document.getElementById('progress').hidden = false;
    bar.value = 0;
    label.textContent = 'uploading…';
    var xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/query');
    xhr.setRequestHeader('X-CSRF-Token', csrf);
    xhr.upload.onprogress = function (ev) {
      if (ev.lengthComputable) bar.value = 100 * ev.loaded / ev.total;
    };
    xhr.upload.onload = function () { bar.removeAttribute('value'); label.textContent = 'comparing with the index…'; };
    xhr.onerror = function () { fail('The server could not be reached.'); };
    xhr.onload = function () {
      var data = null;
      try { data = JSON.parse(xhr.responseText); } catch (err) { data = null; }
      if (xhr.status !== 200) { fail((data && data.error) || ('Error ' + xhr.status)); return; }
      show(data);
    };
    xhr.send(form);
  });

  function download(name, type, content) {
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([content], { type: type }));
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
  }
  var COLUMNS = ['query', 'key', 'similarity', 'reverse_similarity', 'shared', 'query_chunks', 'doc_chunks'];
  function csvCell(v) {
    var s = String(v);
    return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  document.getElementById('download-json').addEventListener('click', function () {
    if (last) download('simdask-results.json', 'application/json', JSON.stringify({ results: last.results }, null, 1));
  });
  document.getElementById('download-csv').addEventListener('click', function () {
    if (!last) return;
    var lines = [COLUMNS.join(',')];
    last.results.forEach(function (r) { lines.push(COLUMNS.map(function (c) { return csvCell(r[c]); }).join(',')); });
    download('simdask-results.csv', 'text/csv', lines.join('\r\n') + '\r\n');
  });
})();
