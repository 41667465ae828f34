"""The script of the static site's generic pair page (issue 31 item 7): the exact 5-word
passages of one pair computed in the browser from :mod:`.site_data`'s records, as
:func:`simdask.evidence.passages.compare_texts` computes them (same steps, same order:
shared kept chunks, the ``max_df`` chunks left out and marked, diagonal runs at most
``2 k`` windows apart, cut out of excluded words, passages inside a larger one dropped,
those shorter than ``min_words`` left out), then shown side by side. Texts and keys are
only ever set as text nodes (``textContent``), never parsed as HTML.

``SimdaskPairs.passages(site, a, b)`` is the pure part (records in, passages out), so that a
test can call it in the browser for any pair.
"""

from __future__ import annotations

__all__ = ["PAIR_JS"]

PAIR_JS = r"""
(function(){'use strict';
function decode(rec){
  if(rec.dec)return rec.dec;
  var b=rec.b,n=b.length/2,s=new Array(n),e=new Array(n),p=0;
  for(var i=0;i<n;i++){s[i]=p+b[2*i];e[i]=s[i]+b[2*i+1];p=e[i];}
  rec.dec={starts:s,ends:e};return rec.dec;}
function ranges(r,n){var m=new Uint8Array(Math.max(n,0));
  for(var i=0;i<r.length;i+=2)for(var j=r[i];j<r[i+1]&&j<n;j++)m[j]=1;return m;}
function windows(rec,k){
  if(rec.win&&rec.win.k===k)return rec.win;
  var w=rec.w,n=Math.max(w.length-k+1,0),keys=new Array(n);
  for(var i=0;i<n;i++){keys[i]=w.slice(i,i+k).sort(function(x,y){return x-y;}).join(',');}
  rec.win={k:k,keys:keys,out:ranges(rec.x,n),common:ranges(rec.c||[],n)};return rec.win;}
function merge(spans){spans.sort(function(x,y){return x[0]-y[0]||x[1]-y[1];});var out=[];
  spans.forEach(function(sp){var l=out[out.length-1];
    if(l&&sp[0]<=l[1])l[1]=Math.max(l[1],sp[1]);else out.push([sp[0],sp[1]]);});return out;}
function commonMarks(hit,d,k){var last=d.ends.length-1,sp=[];
  for(var i=0;i<hit.length;i++)if(hit[i])sp.push([d.starts[i],d.ends[Math.min(i+k-1,last)]]);
  return merge(sp).map(function(x){return [x[0],x[1],'common'];});}
function excludedWords(d,marks){
  var sp=merge(marks.map(function(m){return [m[0],m[1]];})),n=d.starts.length,
      ex=new Uint8Array(n);if(!sp.length)return ex;
  for(var i=0;i<n;i++){var lo=0,hi=sp.length;
    while(lo<hi){var mid=(lo+hi)>>1;if(sp[mid][0]<=d.starts[i])lo=mid+1;else hi=mid;}
    var j=lo-1;if(j>=0&&d.ends[i]<=sp[j][1]&&d.starts[i]>=sp[j][0])ex[i]=1;}
  return ex;}
function keptRuns(i0,j0,last,exA,exB,k){
  var n=last-i0+1,out=[],lo=-1;
  for(var t=0;t<=n;t++){
    var bad=t===n||exA[i0+t]===1||(j0+t<exB.length&&exB[j0+t]===1);
    if(!bad){if(lo<0)lo=t;continue;}
    if(lo>=0&&t-lo>=k)out.push([i0+lo,i0+t-1]);lo=-1;}
  return out;}
function larger(q,p){return q[5]>p[5]||(q[5]===p[5]&&q[4]>p[4]);}
function inside(p,q){return q[0]<=p[0]&&p[1]<=q[1]&&q[2]<=p[2]&&p[3]<=q[3]&&larger(q,p);}
function outermost(found){
  if(found.length<2)return found.slice();
  var order=found.map(function(p,i){return i;});
  order.sort(function(x,y){var p=found[x],q=found[y];return (q[5]-p[5])||(q[4]-p[4])||(x-y);});
  var big=order.slice(0,512).map(function(i){return found[i];});
  return found.filter(function(p){
    var i;for(i=0;i<big.length;i++)if(inside(p,big[i]))return false;
    for(i=0;i<found.length;i++)if(inside(p,found[i]))return false;
    return true;});}
function passages(site,A,B){
  // [doc_start, doc_end, other_start, other_end, words, chunks] per passage, in A's order
  var k=site.k,wa=windows(A,k),wb=windows(B,k),da=decode(A),db=decode(B),i,j;
  var keptA=new Set(),keptB=new Set();
  for(i=0;i<wa.keys.length;i++)if(!wa.out[i])keptA.add(wa.keys[i]);
  for(j=0;j<wb.keys.length;j++)if(!wb.out[j])keptB.add(wb.keys[j]);
  var shared=new Set(),commonA=new Set();
  keptA.forEach(function(c){if(keptB.has(c))shared.add(c);});
  var marksA=A.m.slice(),marksB=B.m.slice();
  if(site.common){
    for(i=0;i<wa.keys.length;i++)if(wa.common[i])commonA.add(wa.keys[i]);
    var dropped=new Set();shared.forEach(function(c){if(commonA.has(c))dropped.add(c);});
    if(dropped.size){dropped.forEach(function(c){shared.delete(c);});
      var hit=function(w){return w.keys.map(function(c){return dropped.has(c)?1:0;});};
      marksA=marksA.concat(commonMarks(hit(wa),da,k));
      marksB=marksB.concat(commonMarks(hit(wb),db,k));}}
  var whereB=new Map();
  for(j=0;j<wb.keys.length;j++){var c=wb.keys[j];
    if(!wb.out[j]&&shared.has(c)){if(!whereB.has(c))whereB.set(c,[]);whereB.get(c).push(j);}}
  var diag=new Map();
  for(i=0;i<wa.keys.length;i++){if(wa.out[i])continue;var js=whereB.get(wa.keys[i]);if(!js)continue;
    for(var t=0;t<js.length;t++){var dd=i-js[t];if(!diag.has(dd))diag.set(dd,[]);
      diag.get(dd).push([i,js[t]]);}}
  var runs=[];
  diag.forEach(function(ms){var st=ms[0],pr=ms[0],n=1;
    for(var t=1;t<ms.length;t++){if(ms[t][0]-pr[0]<=2*k){pr=ms[t];n++;continue;}
      runs.push([st[0],st[1],pr[0],pr[1],n]);st=pr=ms[t];n=1;}
    runs.push([st[0],st[1],pr[0],pr[1],n]);});
  runs.sort(function(x,y){return x[0]-y[0]||x[1]-y[1]||x[2]-y[2]||x[3]-y[3]||x[4]-y[4];});
  var exA=excludedWords(da,marksA),exB=excludedWords(db,marksB),found=[];
  runs.forEach(function(r){if(r[4]<site.min_chunks)return;var d=r[0]-r[1];
    keptRuns(r[0],r[1],r[2]+k-1,exA,exB,k).forEach(function(lh){var lo=lh[0],hi=lh[1];
      found.push([da.starts[lo],da.ends[hi],db.starts[lo-d],db.ends[hi-d],hi-lo+1,r[4]]);});});
  return outermost(found).filter(function(p){return p[4]>=site.min_words;});}
var root=typeof window!=='undefined'?window:globalThis;
root.SimdaskPairs={passages:passages};
if(typeof document==='undefined')return;
// ---- the page ----
var texts={},waiting={};
window.SIMDASK_TEXT=function(name,rec){texts[name]=rec;(waiting[name]||[]).forEach(function(f){f();});};
function load(name,done){if(texts[name]){done();return;}
  if(waiting[name]){waiting[name].push(done);return;}waiting[name]=[done];
  var s=document.createElement('script');s.src='data/t/'+name+'.js';
  s.onerror=function(){say('The data of this pair is missing from the site.');};
  document.head.appendChild(s);}
window.SimdaskPairs.load=load;window.SimdaskPairs.texts=texts;
function el(tag,text,cls){var e=document.createElement(tag);
  if(text!==undefined&&text!==null)e.textContent=text;if(cls)e.className=cls;return e;}
function say(msg){var s=document.getElementById('pair-status');s.textContent=msg;}
function cps(t){return Array.from(t);}
function cut(arr,a,b){return arr.slice(a,b).join('');}
function marked(box,chars,ps,side){
  var pts=new Set([0,chars.length]);
  ps.forEach(function(p){pts.add(p[side]);pts.add(p[side+1]);});
  var cuts=Array.from(pts).sort(function(x,y){return x-y;});
  for(var i=0;i+1<cuts.length;i++){var a=cuts[i],b=cuts[i+1],on=[];
    ps.forEach(function(p,n){if(p[side]<=a&&b<=p[side+1])on.push(n);});
    var part=cut(chars,a,b);
    if(!on.length){box.appendChild(document.createTextNode(part));continue;}
    var m=el('mark',part,'p'+(on[0]%8));m.setAttribute('data-p',on.join(' '));
    m.id=side===0&&a===ps[on[0]][0]?'a'+on[0]:(side===2&&a===ps[on[0]][2]?'b'+on[0]:'');
    if(!m.id)m.removeAttribute('id');box.appendChild(m);}}
function cmd(a,b,ia,ib){function q(s){return "'"+s.replace(/'/g,"'\\''")+"'";}
  return 'simdask report INDEX '+q(a)+' '+q(b)+' --exact-only --html '+ia+'-'+ib+'.html';}
function show(){
  var site=window.SIMDASK_SITE,m=/^#(\d+)-(\d+)$/.exec(location.hash),
      out=document.getElementById('pair');
  out.textContent='';
  if(!site||!m||!site.docs[m[1]]||!site.docs[m[2]]){say('No such pair in this site.');return;}
  var A=site.docs[m[1]],B=site.docs[m[2]];
  document.getElementById('pair-keys').textContent=A[0]+' and '+B[0];
  document.getElementById('pair-cmd').textContent=cmd(A[0],B[0],m[1],m[2]);
  document.getElementById('link-a').href='docs/'+m[1]+'.html';
  document.getElementById('link-a').textContent=A[0];
  document.getElementById('link-b').href='docs/'+m[2]+'.html';
  document.getElementById('link-b').textContent=B[0];
  say('Loading the texts…');
  load(A[1],function(){load(B[1],function(){render(site,A,B,out);});});}
function render(site,A,B,out){
  var ta=texts[A[1]],tb=texts[B[1]],ca=cps(ta.text),cb=cps(tb.text);
  if(ca.length+cb.length>site.large_chars){
    say('These texts are too large to compare in the browser ('+(ca.length+cb.length)+
      ' characters together): the command below writes the pair\'s page.');
    document.body.setAttribute('data-rendered',location.hash.slice(1));return;}
  var ps=passages(site,ta,tb);
  var words=ps.reduce(function(s,p){return s+p[4];},0);
  say(ps.length+(ps.length===1?' passage':' passages')+' of at least '+site.k+
    ' words shared exactly ('+words+' words of the first text), computed in this browser.');
  var tbl=el('table');tbl.id='passages';
  var head=el('tr');
  ['#','first text','second text','words'].forEach(function(h){head.appendChild(el('th',h));});
  tbl.appendChild(head);
  ps.forEach(function(p,n){var tr=el('tr');
    ['doc_start','doc_end','other_start','other_end','words','chunks'].forEach(function(f,i){
      tr.setAttribute('data-'+f.replace('_','-'),p[i]);});
    var a=el('a',String(n+1));a.href='#'+location.hash.slice(1);a.setAttribute('data-goto','a'+n);
    var td=el('td');td.appendChild(a);tr.appendChild(td);
    tr.appendChild(el('td',cut(ca,p[0],Math.min(p[1],p[0]+80))+(p[1]-p[0]>80?'…':'')));
    tr.appendChild(el('td',cut(cb,p[2],Math.min(p[3],p[2]+80))+(p[3]-p[2]>80?'…':'')));
    tr.appendChild(el('td',String(p[4]),'n'));tbl.appendChild(tr);});
  out.appendChild(tbl);
  var cols=el('div',null,'cols'),left=el('div',null,'text'),right=el('div',null,'text');
  left.id='text-a';right.id='text-b';
  marked(left,ca,ps,0);marked(right,cb,ps,2);cols.appendChild(left);cols.appendChild(right);
  out.appendChild(cols);
  tbl.addEventListener('click',function(ev){var g=ev.target.getAttribute('data-goto');
    if(!g)return;ev.preventDefault();var t=document.getElementById(g);
    var u=document.getElementById('b'+g.slice(1));
    if(t)t.scrollIntoView();if(u)u.scrollIntoView();});
  document.body.setAttribute('data-rendered',location.hash.slice(1));}
window.addEventListener('hashchange',show);
if(document.getElementById('pair'))show();
})();
"""
