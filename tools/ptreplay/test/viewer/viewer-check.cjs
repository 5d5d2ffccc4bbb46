// SPDX-License-Identifier: GPL-2.0
/*
 * ptreplay's browser test: load ptreplay's --chrome-trace and --folded
 * files into speedscope in headless Chromium, as a person would, and
 * check what the page shows.  Prints TAP lines ("ok - ..."/"not ok - ...",
 * "# ..."); test/viewer-test.sh numbers them.
 *
 * usage: node viewer-check.cjs SPEEDSCOPE_DIR TRACE.json TRACE.folded
 *                              SCREENSHOT.png CHROMIUM
 *
 * The trace is the calls scenario of test/pr_mkperf.h: thread 100
 * "jitter" runs jit:100:0x10000, which calls jit:100:0x20000, which calls
 * jit:100:0x28000; thread 101 "bpfrunner" runs bpf_prog_1111_outer,
 * which calls bpf_prog_2222_inner.
 */
'use strict';

const http = require('http');
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [ssDir, tracePath, foldedPath, shotPath, chromiumPath] =
	process.argv.slice(2);
const lines = [];
const ok = (what) => lines.push(`ok - ${what}`);
const notOk = (what, why) => {
	lines.push(`not ok - ${what}`);
	for (const l of String(why).split('\n').slice(0, 5))
		lines.push(`# ${l}`);
};
const diag = (d) => lines.push(`# ${d}`);
const check = (what, cond, why) => (cond ? ok(what) : notOk(what, why));

const TYPES = {
	'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
	'.json': 'application/json', '.wasm': 'application/wasm',
	'.png': 'image/png', '.woff2': 'font/woff2', '.ico': 'image/x-icon',
};

/* speedscope's files, and the trace as /trace.json and /trace.folded */
function serve() {
	const server = http.createServer((req, res) => {
		const url = decodeURIComponent(req.url.split(/[?#]/)[0]);
		let file;

		if (url === '/trace.json')
			file = tracePath;
		else if (url === '/trace.folded')
			file = foldedPath;
		else
			file = path.join(ssDir, path.normalize(url === '/' ?
							      '/index.html' : url));
		if (!file.startsWith(ssDir) && file !== tracePath &&
		    file !== foldedPath) {
			res.writeHead(403).end();
			return;
		}
		fs.readFile(file, (err, data) => {
			if (err) {
				res.writeHead(404).end();
				return;
			}
			res.writeHead(200, {
				'Content-Type': TYPES[path.extname(file)] ||
					'text/plain',
			}).end(data);
		});
	});
	return new Promise((resolve) =>
		server.listen(0, '127.0.0.1', () => resolve(server)));
}

/* Open @file (a served name) in speedscope; wait until @text shows. */
async function open(page, base, file, text) {
	/* a query of its own: a new page, not a hash change */
	await page.goto(`${base}/index.html?${file}#profileURL=` +
			encodeURIComponent(`${base}/${file}`));
	await page.getByText(text).first().waitFor({ timeout: 30000 });
	await page.waitForTimeout(500);
}

/* The flame chart's canvas: the largest one on the page. */
async function chartBox(page) {
	let best = null;

	for (const c of await page.locator('canvas').all()) {
		const b = await c.boundingBox();

		if (b && (!best || b.width * b.height > best.width * best.height))
			best = b;
	}
	return best;
}

/* Hover down a vertical line at fraction @fx of the chart's width and
 * return the names the hover tooltip shows, top to bottom, each once.
 */
async function namesDown(page, box, fx, pattern) {
	const seen = [];

	for (let y = box.y + 2; y < box.y + box.height - 2; y += 4) {
		await page.mouse.move(box.x + box.width * fx, y);
		const text = await page.evaluate(() => document.body.innerText);
		const m = text.match(pattern);

		if (m && seen[seen.length - 1] !== m[0])
			seen.push(m[0]);
	}
	await page.mouse.move(box.x + box.width - 2, box.y + box.height - 2);
	return seen;
}

/* The function names speedscope's sandwich view lists. */
async function sandwich(page, pattern) {
	await page.getByText(/Sandwich$/).first().click();
	await page.waitForTimeout(500);
	const text = await page.evaluate(() => document.body.innerText);
	const names = [...new Set(text.match(pattern) || [])].sort();

	await page.getByText(/Time Order$/).first().click();
	await page.waitForTimeout(500);
	return names;
}

async function main() {
	const server = await serve();
	const base = `http://127.0.0.1:${server.address().port}`;
	const errors = [];
	let browser;

	try {
		browser = await chromium.launch({
			executablePath: chromiumPath,
			headless: true,
			args: ['--headless', '--no-sandbox', '--disable-gpu',
			       '--disable-background-networking',
			       '--disable-component-update', '--disable-sync',
			       '--no-first-run'],
		});
	} catch (e) {
		notOk('viewer: headless Chromium starts', e.message);
		server.close();
		return;
	}
	diag(`chromium ${browser.version()}`);
	const page = await browser.newPage({
		viewport: { width: 1280, height: 720 },
	});
	page.on('pageerror', (e) => errors.push(e.message));
	page.on('console', (m) => {
		if (m.type() === 'error')
			errors.push(m.text());
	});
	const jit = /jit:100:0x[0-9a-f]+/g;
	const jit1 = /jit:100:0x[0-9a-f]+/;
	const bpf = /bpf_prog_[0-9a-z_]+/g;
	const bpf1 = /bpf_prog_[0-9a-z_]+/;

	try {
		await open(page, base, 'trace.json', 'jitter');
		ok('viewer: speedscope opens the --chrome-trace file and names ' +
		   'the thread from COMM (jitter)');
		const box = await chartBox(page);

		check('viewer: the time-order flame chart is drawn',
		      box && box.width > 600 && box.height > 300,
		      `canvas ${JSON.stringify(box)}`);
		await page.screenshot({ path: shotPath });
		diag(`screenshot: ${shotPath}`);

		/* jit:100:0x28000 runs from 0.5 to 1.0 us of 3.46 */
		const down = await namesDown(page, box, 0.22, jit1);

		diag(`hovering down at 22%: ${down.join(' > ')}`);
		check('viewer: hovering down the chart shows the JIT calls ' +
		      'nested: jit:100:0x10000 > jit:100:0x20000 > ' +
		      'jit:100:0x28000',
		      down.join('>') ===
		      'jit:100:0x10000>jit:100:0x20000>jit:100:0x28000', down);
		const names = await sandwich(page, jit);

		check('viewer: the sandwich table lists the 3 JIT functions',
		      names.join(',') ===
		      'jit:100:0x10000,jit:100:0x20000,jit:100:0x28000', names);

		/* the next thread: 'n' */
		await page.keyboard.press('n');
		await page.getByText('bpfrunner').first().waitFor({
			timeout: 10000 });
		await page.waitForTimeout(500);
		const down2 = await namesDown(page, await chartBox(page), 0.5,
					      bpf1);

		diag(`bpfrunner, hovering down at 50%: ${down2.join(' > ')}`);
		check('viewer: the second thread (bpfrunner) shows ' +
		      'bpf_prog_2222_inner called from bpf_prog_1111_outer',
		      down2.join('>') ===
		      'bpf_prog_1111_outer>bpf_prog_2222_inner', down2);
		await page.screenshot({
			path: shotPath.replace(/\.png$/, '-bpf.png') });

		await open(page, base, 'trace.folded', 'trace.folded');
		const fnames = await sandwich(page, jit);
		const bnames = await sandwich(page, bpf);

		check('viewer: speedscope opens the --folded file: every JIT ' +
		      'and BPF function listed',
		      fnames.length === 3 && bnames.length === 2,
		      [...fnames, ...bnames]);
	} catch (e) {
		notOk('viewer: the pages load and respond', e.stack || e);
		await page.screenshot({ path: shotPath }).catch(() => {});
	}
	check('viewer: no errors in the page', errors.length === 0,
	      errors.join('\n'));
	await browser.close();
	server.close();
}

main().then(() => {
	console.log(lines.join('\n'));
	process.exit(0);
}, (e) => {
	console.log(lines.join('\n'));
	console.log(`not ok - viewer: the browser test runs\n# ${e}`);
	process.exit(1);
});
