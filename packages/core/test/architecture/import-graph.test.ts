import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * The floor: the backend contract (contract/) and the leaf modules its types are made of
 * (the Tensor type, data types, the config schema, InferenceError, a request's CallerTrace). Every file of the floor
 * imports only files of the floor, so the interfaces a backend stands on never reach the
 * server, the schedulers or the model layer. A folder ends with '/'.
 */
const FLOOR = ['contract/', 'tensor/tensor.ts', 'tensor/datatype.ts', 'config/schema.ts', 'config/proto-integers.ts', 'errors.ts', 'observability/caller-trace.ts'];

interface Edge {
  /** The imported file, relative to src/. */
  readonly to: string;
  readonly line: number;
}

/** file (relative to src/) → the core files it imports. */
type ImportGraph = Map<string, Edge[]>;

/**
 * Core's imports between its own files, read with the TypeScript parser: `import`,
 * `import type`, `export … from`, `import()` and `import('…')` types all count, since a
 * circle of types alone still ties its files together. Bare specifiers (packages) are not
 * core's files and are left out.
 */
function readImportGraph(): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles(SRC)) {
    const path = join(SRC, file);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const edges: Edge[] = [];
    const visit = (node: ts.Node): void => {
      const specifier = moduleSpecifier(node);
      if (specifier?.startsWith('.')) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        edges.push({ to: resolveSpecifier(file, specifier, line), line });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    graph.set(file, edges);
  }
  return graph;
}

/** The .ts files under a directory, relative to it, sorted; installed packages and build output (node_modules, dist, build) left out. */
function sourceFiles(directory: string): string[] {
  const files: string[] = [];
  const walk = (relativeDirectory: string): void => {
    for (const entry of readdirSync(join(directory, relativeDirectory), { withFileTypes: true })) {
      const path = relativeDirectory ? `${relativeDirectory}/${entry.name}` : entry.name;
      if (entry.isDirectory() && !SKIPPED_DIRECTORIES.has(entry.name)) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.ts')) files.push(path);
    }
  };
  walk('');
  return files.sort();
}

const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'build']);

function moduleSpecifier(node: ts.Node): string | undefined {
  if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
    return node.moduleSpecifier.text;
  }
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    const [argument] = node.arguments;
    return argument && ts.isStringLiteral(argument) ? argument.text : undefined;
  }
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
    return node.argument.literal.text;
  }
  return undefined;
}

/** `./x.js` is `./x.ts` in the sources; an import that names no file fails here, so no edge goes unseen. */
function resolveSpecifier(from: string, specifier: string, line: number): string {
  const base = resolve(SRC, dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  const found = candidates.find((candidate) => candidate.endsWith('.ts') && existsSync(candidate));
  if (!found) throw new Error(`${from}:${line} imports '${specifier}', which is no file of core's sources`);
  return relative(SRC, found).split('\\').join('/');
}

/**
 * One cycle per strongly connected group of files (Tarjan), written as the path
 * `a.ts:3 → b.ts:7 → a.ts`, each file with the line of its import of the next.
 */
function findCycles(graph: ImportGraph): string[] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, index.size);
    lowLink.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const { to } of graph.get(file) ?? []) {
      if (!index.has(to)) {
        connect(to);
        lowLink.set(file, Math.min(lowLink.get(file)!, lowLink.get(to)!));
      } else if (onStack.has(to)) {
        lowLink.set(file, Math.min(lowLink.get(file)!, index.get(to)!));
      }
    }
    if (lowLink.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    const importsItself = (graph.get(file) ?? []).some((edge) => edge.to === file);
    if (group.length > 1 || importsItself) groups.push(group.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return groups.map((group) => shortestCycle(graph, new Set(group), group[0]!));
}

/** The shortest path from `start` back to itself inside one group, found breadth first. */
function shortestCycle(graph: ImportGraph, group: ReadonlySet<string>, start: string): string {
  const cameFrom = new Map<string, { file: string; line: number }>();
  const queue = [start];
  for (const file of queue) {
    for (const { to, line } of graph.get(file) ?? []) {
      if (!group.has(to) || cameFrom.has(to)) continue;
      cameFrom.set(to, { file, line });
      if (to === start) {
        const steps: string[] = [start];
        for (let at = cameFrom.get(start)!; ; at = cameFrom.get(at.file)!) {
          steps.unshift(`${at.file}:${at.line}`);
          if (at.file === start) break;
        }
        return `${steps.join(' → ')} (${group.size} files in this circle)`;
      }
      queue.push(to);
    }
  }
  throw new Error(`no cycle through ${start}`);
}

const inFloor = (file: string) => FLOOR.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry));

describe("core's import graph", () => {
  const graph = readImportGraph();

  it('has no import cycle, type-only imports included', () => {
    expect(findCycles(graph)).toEqual([]);
  });

  it('keeps the floor (contract/ and the leaves its types are made of) free of imports from above it', () => {
    const floor = [...graph.keys()].filter(inFloor);
    expect(floor).toContain('contract/backend.ts');
    const upward = floor.flatMap((file) => graph.get(file)!.filter((edge) => !inFloor(edge.to)).map((edge) => `${file}:${edge.line} → ${edge.to}`));
    expect(upward).toEqual([]);
  });

  it('names a cycle when there is one', () => {
    const circle: ImportGraph = new Map([
      ['a.ts', [{ to: 'b.ts', line: 1 }]],
      ['b.ts', [{ to: 'c.ts', line: 2 }]],
      ['c.ts', [{ to: 'a.ts', line: 3 }, { to: 'd.ts', line: 4 }]],
      ['d.ts', []],
    ]);
    expect(findCycles(circle)).toEqual(['a.ts:1 → b.ts:2 → c.ts:3 → a.ts (3 files in this circle)']);
  });
});

/** Core's two faces: what an import of `@tritium/core…` may name. */
const APPLICATION_FACE = '@tritium/core';
const BACKEND_FACE = '@tritium/core/backend';

/** Every `@tritium/core…` specifier a file imports or re-exports, with its line (`import()` and `import('…')` types too). */
function coreImports(path: string): Array<{ readonly specifier: string; readonly line: number }> {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Array<{ specifier: string; line: number }> = [];
  const visit = (node: ts.Node): void => {
    const specifier = moduleSpecifier(node);
    if (specifier === APPLICATION_FACE || specifier?.startsWith(`${APPLICATION_FACE}/`)) {
      found.push({ specifier, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The TypeScript files under a folder of the repository (node_modules and dist left out), relative to the root. */
const filesUnder = (folder: string): string[] => sourceFiles(join(ROOT, folder)).map((file) => `${folder}/${file}`);

/** Every import of core by `files` whose specifier `allowed` refuses, as `file:line imports 'specifier'`. */
const importsBreaking = (files: readonly string[], allowed: (specifier: string) => boolean): string[] =>
  files.flatMap((file) => coreImports(join(ROOT, file)).filter(({ specifier }) => !allowed(specifier)).map(({ specifier, line }) => `${file}:${line} imports '${specifier}'`));

describe("core's two faces", () => {
  const backendPackages = readdirSync(join(ROOT, 'packages'))
    .filter((name) => name.startsWith('backend-') && existsSync(join(ROOT, 'packages', name, 'src')))
    .sort();

  it('has backends import only the backend face (`@tritium/core/backend`)', () => {
    expect(backendPackages).toEqual(expect.arrayContaining(['backend-fil', 'backend-onnx', 'backend-python', 'backend-pytorch']));
    // The example's backend is a backend; its main.ts is the application that serves it.
    const example = filesUnder('examples/custom-backend').filter((file) => !file.endsWith('/main.ts'));
    expect(example).toContain('examples/custom-backend/softmax-backend.ts');
    const files = [...backendPackages.flatMap((name) => filesUnder(`packages/${name}/src`)), ...example];
    expect(importsBreaking(files, (specifier) => specifier === BACKEND_FACE)).toEqual([]);
  });

  it('has the frontend, an application, import only the application face', () => {
    expect(importsBreaking(filesUnder('packages/frontend/src'), (specifier) => specifier === APPLICATION_FACE)).toEqual([]);
  });

  it('has nothing reach past the two faces into core', () => {
    const folders = ['packages', 'examples', 'bench'].flatMap((folder) => (existsSync(join(ROOT, folder)) ? [folder] : []));
    const files = folders.flatMap(filesUnder).filter((file) => !file.startsWith('packages/core/src/'));
    expect(importsBreaking(files, (specifier) => specifier === APPLICATION_FACE || specifier === BACKEND_FACE)).toEqual([]);
  });

  it('lists each face\'s exports by name (an `export *` would make whatever a module exports public)', () => {
    const wholesale = ['index.ts', 'backend-api.ts'].flatMap((face) => {
      const source = ts.createSourceFile(face, readFileSync(join(SRC, face), 'utf8'), ts.ScriptTarget.Latest, true);
      return source.statements
        .filter((statement) => ts.isExportDeclaration(statement) && !statement.exportClause)
        .map((statement) => `${face}:${source.getLineAndCharacterOfPosition(statement.getStart()).line + 1}`);
    });
    expect(wholesale).toEqual([]);
  });
});
