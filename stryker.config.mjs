// @ts-check
/**
 * `npm run mutate`: mutation testing (StrykerJS) of the code that scopes permissions, against
 * the tests that promise it. How to run it, the score and the survivors: docs/testing.md.
 *
 * The tap runner runs each test file as one test (`node --import tsx <file>`, node:test's TAP
 * output); per-test coverage sends a mutant only to the files that reach it and `forceBail`
 * stops at the first failing file. But nearly every test file spawns sessions and so reaches
 * the grants code, and a surviving mutant runs every file that reaches it: one run over one
 * list would run each survivor through all of them. So the files are split into areas, each
 * mutated against its own tests only (`MUTATE_AREA`; scripts/mutate.mjs runs them in turn).
 *
 * Mutated: what decides who may do what. Not mutated: error messages (StringLiteral),
 * patterns and shapes (Regex, ObjectLiteral) and small rewrites of helper calls
 * (ArrowFunction, MethodExpression, OptionalChaining): they carry no scoping promise and
 * would double the run. PostgreSQL is left out (scripts/mutate.mjs points
 * WARREN_TEST_PG_URL nowhere, so those halves skip): the mutated code is the same on both.
 *
 * @type {Record<string, { mutate: string[]; tests: string[] }>}
 */
export const AREAS = {
  // Spawn grants: what a session may start and hand on (docs/security.md, "Spawn grants").
  grants: {
    mutate: ['src/kernel/grants.ts:75-78', 'src/kernel/grants.ts:127-265'],
    tests: ['test/security/spawn-grants.test.ts', 'test/security/grant-narrowing.test.ts'],
  },
  // The read matrix: what a session may read (docs/security.md, docs/concepts.md).
  read: {
    mutate: ['src/kernel/access.ts'],
    tests: [
      'test/security/read-matrix.test.ts',
      'test/security/read-scope.test.ts',
      'test/security/operator-reads.test.ts',
    ],
  },
  // Credentials: operator keys and session tokens (docs/http.md, "Auth", "Session tokens").
  auth: {
    mutate: ['src/auth/authenticate.ts', 'src/auth/tokens.ts'],
    // jwt.test.ts: the bearer JWT branch, and session tokens still accepted beside it.
    tests: ['test/http/auth.test.ts', 'test/http/tokens.test.ts', 'test/coordinator/jwt.test.ts'],
  },
  // The plugins' scoping: who may act on a task, which zone a coordinator caller may act in.
  plugins: {
    mutate: ['src/plugins/orchestration/access.ts', 'src/plugins/coordinator/access.ts'],
    // task-access.test.ts first: the subtree walk at every depth, in seconds (tasks.test.ts takes a minute).
    tests: ['test/orchestration/task-access.test.ts', 'test/orchestration/tasks.test.ts', 'test/coordinator/jwt.test.ts'],
  },
};

const name = process.env.MUTATE_AREA ?? 'grants';
const area = AREAS[name];
if (!area) throw new Error(`MUTATE_AREA=${name}: not one of ${Object.keys(AREAS).join(', ')}`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'tap',
  tap: { testFiles: area.tests, nodeArgs: ['--import', 'tsx'], forceBail: true },
  mutate: area.mutate,
  mutator: {
    excludedMutations: [
      'StringLiteral',
      'Regex',
      'ObjectLiteral',
      'ArrowFunction',
      'MethodExpression',
      'OptionalChaining',
    ],
  },
  coverageAnalysis: 'perTest',
  // A mutant in module-level code (a constant table) would need every test file run again.
  ignoreStatic: true,
  concurrency: 1,
  // The test files start servers and agents: slower under load than Stryker's default allows.
  timeoutMS: 30_000,
  ignorePatterns: ['/web', '/bench', '/examples', '/.warren', '/.scratch', '/.bench', '/reports'],
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  tempDirName: '.stryker-tmp',
  // A second run retests only what changed: mutants in changed code, survivors that a new or
  // changed test file reaches (`npm run mutate -- --force` ignores it).
  incremental: true,
  incrementalFile: `reports/mutation/${name}.incremental.json`,
};
