// The console's shell: reads config.json, signs in (a key pair kept for this browser tab),
// switches views by the URL's #fragment, shows the status line and the log of requests sent,
// and samples /metrics every second for the charts.
import { Api } from './api.js';
import { CHARTS, LineChart } from './charts.js';
import { VIEWS } from './views.js';

const $ = (id) => document.getElementById(id);
const STORAGE_KEY = 'fdyno-console-credentials';
const SIGNED_OUT = 'signed-out';  // stored instead of a key: ask for one, even in open mode

const ui = {
  $,
  status(text, kind = 'ok') {
    $('status').textContent = text;
    $('status').className = kind;
  },
  // Runs an action of the page: its error goes to the status line instead of being lost.
  async guard(action) {
    try {
      return await action();
    } catch (e) {
      ui.status(e.message || String(e), 'error');
      return undefined;
    }
  },
};

async function loadConfig() {
  const response = await fetch('/console/config.json');
  return response.json();
}

function savedCredentials(config) {
  const saved = sessionStorage.getItem(STORAGE_KEY);
  if (saved === SIGNED_OUT) return null;
  if (saved) return JSON.parse(saved);
  // Open mode: any key is accepted; a default one saves a step.
  if (!config.signIn) return { accessKeyId: 'fdyno-console', secretAccessKey: 'fdyno-console', region: config.region };
  return null;
}

function showSignIn(config, reason) {
  const current = { region: config.region };
  $('access-key').value = current.accessKeyId || '';
  $('secret-key').value = '';
  $('region').value = current.region || config.region;
  $('sign-in').hidden = false;
  $('nav').hidden = true;
  for (const v of document.querySelectorAll('.view')) v.hidden = true;
  if (reason) ui.status(reason, 'error');
}

async function signIn(config, credentials) {
  const api = new Api(config, credentials);
  await api.call('ListTables', { Limit: 1 });  // checks the key before anything else
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credentials));
  api.onCall = (op, request) => {
    const li = document.createElement('li');
    li.textContent = `${new Date().toLocaleTimeString()} ${op} ${JSON.stringify(request)}`;
    $('request-log').prepend(li);
    while ($('request-log').children.length > 200) $('request-log').lastChild.remove();
  };
  return api;
}

function startMetrics(config) {
  if (!config.metrics) {
    $('metrics-note').textContent = 'This listener does not serve /metrics.';
    return;
  }
  const charts = CHARTS.map((spec) => {
    const box = document.createElement('div');
    box.className = 'chart';
    const title = document.createElement('h3');
    title.textContent = spec.title;
    const canvas = document.createElement('canvas');
    canvas.id = `chart-${spec.id}`;
    canvas.width = 480;
    canvas.height = 160;
    const legend = document.createElement('div');
    legend.className = 'legend';
    legend.id = `legend-${spec.id}`;
    box.append(title, canvas, legend);
    $('charts').append(box);
    return new LineChart(spec, canvas, legend);
  });
  let previous = null;
  const sample = async () => {
    try {
      const current = await (await fetch('/metrics', { cache: 'no-store' })).json();
      const now = performance.now();
      if (previous) {
        const dt = Math.max(0.001, (now - previous.at) / 1000);
        charts.forEach((c) => c.push(c.spec.compute(previous.data, current, dt)));
      }
      previous = { at: now, data: current };
    } catch {
      // The server restarting: the next sample starts again.
      previous = null;
    }
  };
  sample();
  setInterval(sample, 1000);
}

function route(views) {
  const name = (location.hash || '#tables').slice(1);
  const view = views[name] ? name : 'tables';
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.view === view);
  for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== `view-${view}`;
  views[view].show();
}

async function main() {
  const config = await loadConfig();
  startMetrics(config);
  let views = null;
  const enter = async (credentials) => {
    const api = await signIn(config, credentials);
    $('sign-in').hidden = true;
    $('nav').hidden = false;
    $('sign-out').hidden = false;
    $('who').textContent = `${credentials.accessKeyId} · ${credentials.region}`;
    ui.status('');
    views = Object.fromEntries(Object.entries(VIEWS).map(([k, View]) => [k, new View(api, ui)]));
    route(views);
  };
  window.addEventListener('hashchange', () => views && route(views));
  $('sign-in-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const credentials = {
      accessKeyId: $('access-key').value.trim(),
      secretAccessKey: $('secret-key').value,
      region: $('region').value.trim(),
    };
    await ui.guard(() => enter(credentials));
  });
  $('sign-out').addEventListener('click', () => {
    sessionStorage.setItem(STORAGE_KEY, SIGNED_OUT);
    location.reload();
  });
  const saved = savedCredentials(config);
  if (!saved) return showSignIn(config);
  try {
    await enter(saved);
  } catch (e) {
    sessionStorage.removeItem(STORAGE_KEY);
    showSignIn(config, e.message);
  }
}

main();
