import { ALIASES, FIXED, FLAGS, IGNORED } from './flags.js';

const WIDTH = 80;

/** What `tritium --help` prints: every implemented flag, then what becomes of tritonserver's other flags. */
export function usage(): string {
  const flags = Object.entries(FLAGS).flatMap(([name, flag]) => [`  --${name}${flag.value ? ` ${flag.value}` : ''}`, ...wrap(flag.help, '        ')]);
  const notes = [
    `Aliases: ${Object.entries(ALIASES).map(([alias, name]) => `--${alias} for --${name}`).join(', ')}.`,
    `Accepted only at the value tritium behaves by: ${Object.entries(FIXED).map(([name, { accepts }]) => `--${name}=${String(accepts)}`).join(', ')}.`,
    `Accepted and ignored, with a warning (harmless here): ${Object.keys(IGNORED).map((name) => `--${name}`).join(', ')}.`,
    "tritonserver's other flags are refused, saying why.",
    'Exit status: 0 after a clean shutdown, 1 when the server fails to start or to shut down, 2 for a command line that cannot run.',
  ];
  return [
    'Usage: tritium serve --model-repository <path> [flags]',
    '       tritium perf -m <model> [options]   (tritium perf --help)',
    '       tritium analyze -m <model> [options]   (tritium analyze --help)',
    '       tritium --help | --version',
    '',
    ...wrap(
      "Serves a Triton model repository over Triton's HTTP/REST and gRPC protocols (KServe v2) and Prometheus metrics. " +
        "The flags are tritonserver's, as --flag=value or --flag value; 'serve' may be left out, as in a tritonserver command line.",
      '',
    ),
    '',
    'Flags:',
    ...flags,
    '',
    ...notes.flatMap((note) => wrap(note, '')),
    '',
  ].join('\n');
}

/** Words in lines of at most WIDTH characters, each line indented. */
function wrap(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent.length + line.length + 1 + word.length > WIDTH) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  return [...lines, indent + line];
}
