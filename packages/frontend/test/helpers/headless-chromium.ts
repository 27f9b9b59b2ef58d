import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

/** The headless Chromium on PATH, or why there is none to render with (a reason to skip). */
export function findChromium(): { chromium: string } | { skip: string } {
  const chromium = ['chromium', 'chromium-browser', 'google-chrome'].find((name) => spawnSync(name, ['--version'], { stdio: 'ignore' }).status === 0);
  if (!chromium) return { skip: 'no chromium on PATH (Debian: apt-get install chromium)' };
  if (spawnSync('python3', ['-c', 'import PIL'], { stdio: 'ignore' }).status !== 0) return { skip: "python3 -c 'import PIL' fails: nothing here reads the screenshot" };
  return { chromium };
}

/** Prints how many pixels of a PNG (argv[1]) left of x = argv[2] have each colour given as hex (argv[3:]), as a JSON list. */
const PIXELS_OF_COLOURS = `import json, sys
from PIL import Image
image = Image.open(sys.argv[1]).convert('RGB')
image = image.crop((0, 0, min(int(sys.argv[2]), image.width), image.height))
pixels = list(image.getdata())
wanted = [tuple(int(h[i:i + 2], 16) for i in (0, 2, 4)) for h in sys.argv[3:]]
print(json.dumps([sum(1 for p in pixels if p == w) for w in wanted]))`;

/**
 * Screenshots `page` (an HTML file) with `chromium` into `png`, then counts its pixels of
 * each colour (hex, with or without '#') left of `leftOf` (the legend's edge: the page's
 * margin moves the plot right, never left, so the legend's samples of the same colours
 * stay out); throws with the tool's stderr when a step fails.
 */
export function renderedPixels(chromium: string, page: string, png: string, colours: readonly string[], leftOf: number): number[] {
  const shot = spawnSync(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--window-size=1000,700', `--screenshot=${png}`, pathToFileURL(page).href], { encoding: 'utf8', timeout: 60_000 });
  if (shot.status !== 0) throw new Error(`${chromium} --screenshot exited ${shot.status}: ${shot.stderr}`);
  const count = spawnSync('python3', ['-c', PIXELS_OF_COLOURS, png, String(leftOf), ...colours.map((c) => c.replace(/^#/, ''))], { encoding: 'utf8' });
  if (count.status !== 0) throw new Error(`counting pixels failed: ${count.stderr}`);
  return JSON.parse(count.stdout) as number[];
}
