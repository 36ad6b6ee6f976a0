// Drives fdyno's browser console in a real Chromium (playwright-core), as a user would:
// signs in, creates a table, adds, edits and deletes items, runs a query and a PartiQL
// statement, watches a stream's records arrive and a chart update. Run by test_console.py,
// which then checks the server's data with boto3. Exits non-zero at the first step that fails.
//
// Environment: CONSOLE_URL (the page), CHROMIUM (the browser), FDYNO_PLAYWRIGHT (a
// node_modules directory holding playwright-core), CONSOLE_KEY/CONSOLE_SECRET (a key pair to
// sign in with, when the server has --credentials), SCREENSHOTS (a directory: one PNG a step).
import path from 'node:path';

const { chromium } = await import(path.join(process.env.FDYNO_PLAYWRIGHT, 'playwright-core', 'index.mjs'));
const TABLE = 'ConsoleOrders';
const shots = process.env.SCREENSHOTS;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM, headless: true, args: ['--no-sandbox'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
page.setDefaultTimeout(15000);
page.on('dialog', (dialog) => dialog.accept());
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
const external = [];
page.on('request', (r) => { if (!r.url().startsWith(new URL(process.env.CONSOLE_URL).origin)) external.push(r.url()); });

let stepNumber = 0;
async function step(name, body) {
  await body();
  stepNumber += 1;
  console.log(`ok ${stepNumber} ${name}`);
  if (shots) await page.screenshot({ path: path.join(shots, `${String(stepNumber).padStart(2, '0')}-${name}.png`) });
}

// Waits until the status line reads `text`; an error there fails the step at once.
async function expectStatus(text) {
  await page.waitForFunction((want) => {
    const s = document.getElementById('status');
    if (s.className === 'error') throw new Error(`the console reported: ${s.textContent}`);
    return s.textContent === want;
  }, text);
}

async function setEditor(item) {
  await page.fill('#item-json', JSON.stringify(item, null, 2));
  await page.click('#item-save');
}

const row = (key) => `#items-grid tr[data-key='${JSON.stringify(key)}']`;

try {
  await step('sign-in', async () => {
    await page.goto(process.env.CONSOLE_URL);
    if (process.env.CONSOLE_KEY) {
      await page.fill('#access-key', process.env.CONSOLE_KEY);
      await page.fill('#secret-key', process.env.CONSOLE_SECRET);
      await page.click('#sign-in-button');
    }
    await page.waitForSelector('#nav:not([hidden])');
  });

  await step('create-table', async () => {
    await page.click('#create-table summary');
    await page.fill('#create-table-json', JSON.stringify({
      TableName: TABLE,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }, null, 2));
    await page.click('#create-table-button');
    await expectStatus(`Created table ${TABLE}`);
    await page.waitForSelector(`#table-list a:text-is("${TABLE}")`);
    await page.waitForFunction((t) => document.getElementById('table-description').textContent.includes(`"TableName": "${t}"`), TABLE);
  });

  await step('add-item', async () => {
    await page.click('a[data-view=items]');
    await page.waitForSelector(`#items-table option[value="${TABLE}"]`, { state: 'attached' });
    await page.selectOption('#items-table', TABLE);
    await page.click('#items-add');
    await setEditor({ pk: { S: 'o1' }, sk: { S: 'a' }, status: { S: 'open' }, total: { N: '12' } });
    await expectStatus('Item added');
    await page.waitForSelector(row({ pk: { S: 'o1' }, sk: { S: 'a' } }));
  });

  await step('edit-item', async () => {
    await page.click(`${row({ pk: { S: 'o1' }, sk: { S: 'a' } })} .action-edit`);
    await page.waitForSelector('#item-editor:not([hidden])');
    const shown = JSON.parse(await page.inputValue('#item-json'));
    if (shown.status.S !== 'open') throw new Error(`the editor shows ${JSON.stringify(shown)}`);
    await setEditor({ ...shown, status: { S: 'shipped' }, total: { N: '15.5' }, tags: { SS: ['gift', 'red'] } });
    await expectStatus('Item saved');
    await page.waitForFunction(() => document.getElementById('items-grid').textContent.includes('shipped'));
  });

  await step('query', async () => {
    await page.click('a[data-view=query]');
    await page.waitForSelector(`#q-table option[value="${TABLE}"]`, { state: 'attached' });
    await page.selectOption('#q-table', TABLE);
    await page.fill('#q-key', '#p = :p');
    await page.fill('#q-names', '{"#p": "pk"}');
    await page.fill('#q-values', '{":p": {"S": "o1"}}');
    await page.click('#q-run');
    await page.waitForFunction(() => document.getElementById('q-summary').textContent.startsWith('Query: 1 items'));
    await page.waitForFunction(() => document.getElementById('q-grid').textContent.includes('shipped'));
  });

  await step('partiql', async () => {
    await page.click('a[data-view=partiql]');
    await page.fill('#pq-statement', `SELECT status, total FROM "${TABLE}" WHERE pk = ?`);
    await page.fill('#pq-parameters', '[{"S": "o1"}]');
    await page.click('#pq-run');
    await page.waitForFunction(() => document.getElementById('pq-summary').textContent === '1 items');
    await page.waitForFunction(() => document.getElementById('pq-grid').textContent.includes('15.5'));
  });

  await step('stream', async () => {
    await page.click('a[data-view=streams]');
    await page.waitForSelector(`#st-table option[value="${TABLE}"]`, { state: 'attached' });
    await page.selectOption('#st-table', TABLE);
    await page.click('#st-watch');
    await page.waitForFunction(() => document.getElementById('st-status').textContent.startsWith('Watching'));
    // A write made after watching began appears, with its new image.
    await page.click('a[data-view=items]');
    await page.click('#items-add');
    await setEditor({ pk: { S: 'o2' }, sk: { S: 'b' }, status: { S: 'new' } });
    await expectStatus('Item added');
    await page.click(`${row({ pk: { S: 'o2' }, sk: { S: 'b' } })} .action-delete`);
    await expectStatus('Item deleted');
    await page.click('a[data-view=streams]');
    await page.waitForSelector('#st-records li.record-INSERT:has-text("o2")');
    await page.waitForSelector('#st-records li.record-REMOVE:has-text("o2")');
  });

  await step('metrics', async () => {
    await page.click('a[data-view=metrics]');
    const samples = async () => Number(await page.getAttribute('#chart-requests', 'data-samples'));
    await page.waitForFunction(() => Number(document.getElementById('chart-requests').dataset.samples) >= 2);
    const before = await page.evaluate(() => document.getElementById('chart-requests').toDataURL());
    const seen = await samples();
    // Scans made now show in the next samples: the legend names Scan with a rate, the line moves.
    await page.click('a[data-view=items]');
    for (let i = 0; i < 5; i++) await page.click('#items-scan');
    await page.click('a[data-view=metrics]');
    await page.waitForFunction((n) => Number(document.getElementById('chart-requests').dataset.samples) > n + 1, seen);
    await page.waitForSelector('#legend-requests .legend-item:has-text("Scan")');
    const after = await page.evaluate(() => document.getElementById('chart-requests').toDataURL());
    if (after === before) throw new Error('the requests chart did not change');
  });

  if (pageErrors.length) throw new Error(`errors in the page: ${pageErrors.join('; ')}`);
  if (external.length) throw new Error(`requests outside the server: ${external.join(', ')}`);
  console.log('all steps passed');
} catch (e) {
  console.error(`step ${stepNumber + 1} failed: ${e.message}`);
  if (shots) await page.screenshot({ path: path.join(shots, 'failed.png') });
  process.exitCode = 1;
} finally {
  await browser.close();
}
