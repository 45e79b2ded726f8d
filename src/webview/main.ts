/// <reference lib="dom" />
/// <reference lib="dom.asynciterable" />
// The audit log page (runs in the webview's browser sandbox; bundled to dist/webview.js). No
// `vscode`, no Node: it talks to the host only through the messages in protocol.ts.
//
// The list is virtualised: it keeps a sparse cache of the rows of the filtered view, renders only the
// rows in the viewport (plus a margin) and asks the host for missing pages as the user scrolls.
import {
  PAGE_SIZE,
  sanitizeFilter,
  type AuditDetail,
  type AuditFilter,
  type AuditRow,
  type ChainStatus,
  type HostMessage,
  type PageMessage,
} from './protocol';

declare function acquireVsCodeApi(): { postMessage(m: PageMessage): void; getState(): unknown; setState(s: unknown): void };
const vscode = acquireVsCodeApi();
const send = (m: PageMessage): void => vscode.postMessage(m);

const ROW_H = 22;
const OVERSCAN = 10;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// ---- layout ---------------------------------------------------------------------------------------
const app = document.getElementById('app')!;
const toolbar = el('div', 'toolbar');
const sessionSel = el('select');
sessionSel.id = 'filter-session';
sessionSel.title = 'Session';
const eventSel = el('select');
eventSel.id = 'filter-event';
eventSel.title = 'Event type';
const decisionSel = el('select');
decisionSel.id = 'filter-decision';
decisionSel.title = 'Decision';
const textInput = el('input');
textInput.id = 'filter-text';
textInput.type = 'search';
textInput.placeholder = 'Filter: text in session, event, action, rules, reason, arguments…';
const clearBtn = el('button', 'secondary', 'Clear');
clearBtn.id = 'clear-filter';
toolbar.append(sessionSel, eventSel, decisionSel, textInput, clearBtn);

const statusBar = el('div', 'status');
const counts = el('span', 'counts');
counts.id = 'counts';
const chainText = el('span', 'chain');
chainText.id = 'chain-status';
const verifyBtn = el('button', 'primary', 'Verify');
verifyBtn.id = 'verify';
const reloadBtn = el('button', 'secondary', 'Reload');
reloadBtn.id = 'reload';
const fileText = el('span', 'file');
fileText.id = 'log-file';
statusBar.append(counts, chainText, verifyBtn, reloadBtn, fileText);

const errorBox = el('div', 'error');
errorBox.id = 'error';
errorBox.hidden = true;

const main = el('div', 'main');
const listWrap = el('div', 'list-wrap');
const header = el('div', 'row header');
for (const [c, t] of [
  ['seq', '#'],
  ['ts', 'Time'],
  ['session', 'Session'],
  ['event', 'Event'],
  ['action', 'Action'],
  ['decision', 'Decision'],
  ['summary', 'Summary'],
] as const)
  header.append(el('span', c, t));
const list = el('div', 'list');
list.id = 'list';
list.tabIndex = 0;
const spacer = el('div', 'spacer');
const rowsLayer = el('div', 'rows');
spacer.append(rowsLayer);
list.append(spacer);
listWrap.append(header, list);
const detailPane = el('div', 'detail');
detailPane.id = 'detail';
detailPane.append(el('p', 'muted', 'Select an entry to see its decision and arguments.'));
main.append(listWrap, detailPane);
app.append(toolbar, statusBar, errorBox, main);

// ---- state ------------------------------------------------------------------------------------------
let filtered = 0;
let total = 0;
let cache = new Map<number, AuditRow>();
let requested = new Set<number>(); // page numbers asked for
let requestId = 0;
let validRequest = 0; // answers to older requests (before a filter/init) are dropped
let selectedSeq: number | undefined;
let brokenSeq: number | undefined;
let chain: ChainStatus = { state: 'unverified' };
let stickToBottom = false;
let loadingMore = false;

function fillSelect(sel: HTMLSelectElement, label: string, values: readonly string[], current: string | undefined): void {
  const keep = current ?? sel.value;
  sel.replaceChildren();
  const any = el('option', undefined, `${label}: all`);
  any.value = '';
  sel.append(any);
  for (const v of values) {
    const o = el('option', undefined, v);
    o.value = v;
    sel.append(o);
  }
  sel.value = values.includes(keep) ? keep : '';
}

function currentFilter(): AuditFilter {
  return {
    session: sessionSel.value || undefined,
    event: eventSel.value || undefined,
    decision: decisionSel.value || undefined,
    text: textInput.value || undefined,
  };
}

function renderCounts(): void {
  counts.textContent = loadingMore
    ? `${total}+ entries (loading…)`
    : filtered === total
      ? `${total} entries`
      : `${filtered} of ${total} entries`;
}

function renderChain(): void {
  chainText.className = `chain ${chain.state}`;
  const text: Record<ChainStatus['state'], string> = {
    unverified: 'Chain: not verified yet',
    verifying: `Chain: verifying…${chain.checked ? ` ${chain.checked} entries` : ''}`,
    intact: `Chain: ${chain.message ?? 'intact'}`,
    broken: `Chain: ${chain.message ?? 'broken'}`,
    error: `Chain: ${chain.message ?? 'error'}`,
  };
  chainText.textContent = text[chain.state];
  verifyBtn.disabled = chain.state === 'verifying';
}

function resetRows(start: number, rows: readonly AuditRow[]): void {
  cache = new Map();
  requested = new Set();
  validRequest = ++requestId;
  rows.forEach((r, k) => cache.set(start + k, r));
  for (let p = Math.floor(start / PAGE_SIZE); p * PAGE_SIZE < start + rows.length; p++) requested.add(p);
}

// ---- virtualised list -------------------------------------------------------------------------------
function render(): void {
  spacer.style.height = `${filtered * ROW_H}px`;
  const top = list.scrollTop;
  const height = list.clientHeight || 400;
  const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
  const last = Math.min(filtered, Math.ceil((top + height) / ROW_H) + OVERSCAN);
  const frag = document.createDocumentFragment();
  const missing = new Set<number>();
  for (let i = first; i < last; i++) {
    const r = cache.get(i);
    const row = el('div', 'row');
    row.style.transform = `translateY(${i * ROW_H}px)`;
    if (!r) {
      row.classList.add('loading');
      row.append(el('span', 'seq', '…'));
      missing.add(Math.floor(i / PAGE_SIZE));
    } else {
      row.dataset.seq = String(r.seq);
      if (r.seq === selectedSeq) row.classList.add('selected');
      if (r.seq === brokenSeq) row.classList.add('broken');
      if (r.decision) row.classList.add(`d-${r.decision}`);
      row.append(
        el('span', 'seq', String(r.seq)),
        el('span', 'ts', r.ts.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')),
        el('span', 'session', r.session),
        el('span', 'event', r.event),
        el('span', 'action', r.action ?? ''),
        el('span', 'decision', r.decision ? `${r.decision}${r.tier !== undefined ? ` T${r.tier}` : ''}` : ''),
        el('span', 'summary', r.summary),
      );
      row.title = r.summary;
    }
    frag.append(row);
  }
  rowsLayer.replaceChildren(frag);
  for (const p of missing) {
    if (requested.has(p)) continue;
    requested.add(p);
    send({ type: 'requestRange', requestId: ++requestId, start: p * PAGE_SIZE, count: PAGE_SIZE });
  }
}

let frame = 0;
function scheduleRender(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    render();
  });
}

list.addEventListener('scroll', () => {
  stickToBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - ROW_H;
  scheduleRender();
});
window.addEventListener('resize', scheduleRender);

function scrollToIndex(i: number): void {
  const top = i * ROW_H;
  if (top < list.scrollTop || top + ROW_H > list.scrollTop + list.clientHeight) list.scrollTop = Math.max(0, top - list.clientHeight / 2);
  scheduleRender();
}

list.addEventListener('click', (ev) => {
  const row = (ev.target as HTMLElement).closest<HTMLElement>('.row');
  if (!row?.dataset.seq) return;
  select(Number(row.dataset.seq));
});
list.addEventListener('keydown', (ev) => {
  if (ev.key !== 'ArrowDown' && ev.key !== 'ArrowUp') return;
  ev.preventDefault();
  let idx = -1;
  for (const [i, r] of cache)
    if (r.seq === selectedSeq) {
      idx = i;
      break;
    }
  const next = Math.max(0, Math.min(filtered - 1, idx + (ev.key === 'ArrowDown' ? 1 : -1)));
  const r = cache.get(next);
  if (r) {
    select(r.seq);
    scrollToIndex(next);
  }
});

function select(seq: number): void {
  selectedSeq = seq;
  scheduleRender();
  send({ type: 'select', seq });
}

// ---- detail pane -------------------------------------------------------------------------------------
function field(dl: HTMLElement, name: string, value: string | undefined, cls?: string): void {
  if (value === undefined || value === '') return;
  dl.append(el('dt', undefined, name), el('dd', cls, value));
}

function renderDetail(seq: number, d: AuditDetail | undefined): void {
  detailPane.replaceChildren();
  if (!d) {
    detailPane.append(el('p', 'muted', `Entry ${seq} is not in the loaded log (reload).`));
    return;
  }
  const title = el('h2', undefined, `#${d.seq} ${d.event}`);
  if (d.seq === brokenSeq) title.append(el('span', 'badge broken', 'first broken entry'));
  detailPane.append(title);
  const dl = el('dl');
  field(dl, 'Time', d.ts);
  field(dl, 'Session', d.session);
  field(dl, 'Action', d.action);
  field(dl, 'Id', d.id);
  detailPane.append(dl);
  if (d.decision) {
    detailPane.append(el('h3', undefined, 'Decision'));
    const dd = el('dl', 'decision-box');
    field(dd, 'Decision', d.decision.decision, `d-${d.decision.decision ?? ''}`);
    field(dd, 'Tier', d.decision.tier !== undefined ? String(d.decision.tier) : undefined);
    field(dd, 'Rules', d.decision.rules?.length ? d.decision.rules.join(', ') : '(none)');
    field(dd, 'Reason', d.decision.reason);
    if (d.decision.reasons?.length) {
      // Each rule behind the decision on its own line: which tier, and whether it is a protection rule, a policy or an error.
      const aliases = d.decision.ruleAliases ?? {};
      const why = el('ul', 'reasons');
      for (const r of d.decision.reasons) {
        const alias = aliases[r.rule] ? ` (formerly ${aliases[r.rule]})` : '';
        const where = [r.tier !== undefined ? `Tier ${r.tier}` : '', r.kind ?? ''].filter(Boolean).join(', ');
        why.append(el('li', undefined, `${r.rule}${alias}${where ? ` [${where}]` : ''}: ${r.message}`));
      }
      const dt = el('dt', undefined, 'Why');
      const ddWhy = el('dd');
      ddWhy.append(why);
      dd.append(dt, ddWhy);
    }
    field(dd, 'Confidence', d.decision.confidence !== undefined ? String(d.decision.confidence) : undefined);
    detailPane.append(dd);
  }
  if (d.args !== undefined) {
    detailPane.append(el('h3', undefined, 'Arguments (secrets redacted)'), el('pre', 'code', d.args));
  }
  if (d.other !== undefined) {
    detailPane.append(el('h3', undefined, 'Other details'), el('pre', 'code', d.other));
  }
  detailPane.append(el('h3', undefined, 'Chain'));
  const hl = el('dl', 'hashes');
  field(hl, 'prev_hash', d.prevHash, 'hash');
  field(hl, 'hash', d.hash, 'hash');
  detailPane.append(hl);
}

// ---- filters and buttons ------------------------------------------------------------------------------
let filterTimer: ReturnType<typeof setTimeout> | undefined;
function sendFilter(): void {
  if (filterTimer) clearTimeout(filterTimer);
  filterTimer = setTimeout(() => {
    filterTimer = undefined;
    const filter = currentFilter();
    vscode.setState({ filter }); // survives a reload of the window (the panel is restored)
    send({ type: 'filter', filter });
  }, 120);
}
sessionSel.addEventListener('change', sendFilter);
eventSel.addEventListener('change', sendFilter);
decisionSel.addEventListener('change', sendFilter);
textInput.addEventListener('input', sendFilter);
clearBtn.addEventListener('click', () => {
  sessionSel.value = '';
  eventSel.value = '';
  decisionSel.value = '';
  textInput.value = '';
  sendFilter();
});
verifyBtn.addEventListener('click', () => {
  chain = { state: 'verifying' };
  renderChain();
  send({ type: 'verify' });
});
reloadBtn.addEventListener('click', () => send({ type: 'reload' }));

// ---- messages from the host ----------------------------------------------------------------------------
window.addEventListener('message', (ev: MessageEvent<HostMessage>) => {
  const m = ev.data;
  switch (m.type) {
    case 'init': {
      total = m.total;
      filtered = m.filtered;
      fillSelect(sessionSel, 'Session', m.sessions, m.filter.session);
      fillSelect(eventSel, 'Event', m.events, m.filter.event);
      fillSelect(decisionSel, 'Decision', m.decisions, m.filter.decision);
      if (document.activeElement !== textInput) textInput.value = m.filter.text ?? '';
      fileText.textContent = m.logFile;
      fileText.title = m.logFile;
      errorBox.hidden = !m.error;
      errorBox.textContent = m.error ?? '';
      if (m.chain.state !== 'verifying' || chain.state !== 'verifying') chain = m.chain;
      brokenSeq = chain.firstBrokenSeq;
      const keepScroll = loadingMore && !m.partial; // the complete view after an early first page
      loadingMore = m.partial === true;
      resetRows(m.start, m.rows);
      if (!keepScroll) list.scrollTop = 0;
      renderCounts();
      renderChain();
      render();
      document.body.dataset.ready = 'true';
      return;
    }
    case 'rows': {
      if (m.requestId <= validRequest) return;
      filtered = m.filtered;
      m.rows.forEach((r, k) => cache.set(m.start + k, r));
      scheduleRender();
      return;
    }
    case 'append': {
      total = m.total;
      const before = filtered;
      filtered = m.filtered;
      m.rows.forEach((r, k) => cache.set(before + k, r));
      fillSelect(sessionSel, 'Session', m.sessions, undefined);
      fillSelect(eventSel, 'Event', m.events, undefined);
      renderCounts();
      render();
      if (stickToBottom) list.scrollTop = list.scrollHeight;
      return;
    }
    case 'detail':
      if (m.seq === selectedSeq) renderDetail(m.seq, m.detail);
      return;
    case 'verifyProgress':
      chain = { state: 'verifying', checked: m.checked };
      renderChain();
      return;
    case 'verifyResult': {
      chain = m.chain;
      brokenSeq = m.chain.firstBrokenSeq;
      renderChain();
      if (brokenSeq !== undefined) {
        if (m.index !== undefined && m.index >= 0) {
          scrollToIndex(m.index);
          select(brokenSeq);
        } else {
          chainText.textContent += ' (not in the current filter: clear it to see the entry)';
        }
      }
      scheduleRender();
      return;
    }
  }
});

renderChain();
const saved = vscode.getState() as { filter?: unknown } | undefined;
send({ type: 'ready', ...(saved?.filter ? { filter: sanitizeFilter(saved.filter) } : {}) });
