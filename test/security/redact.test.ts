import assert from 'node:assert/strict';
import { it } from 'node:test';
import { looksLikeCredential, REDACTED, redactCredentials, scrubValues } from '../../src/util/redact.ts';

it('credential-looking keys are recognised; ordinary ones are not', () => {
  for (const k of [
    'ANTHROPIC_API_KEY',
    'OPENAI_API_KEY',
    'apiKey',
    'GITHUB_TOKEN',
    'access_token',
    'AWS_SECRET_ACCESS_KEY',
    'DB_PASSWORD',
    'Authorization',
    'SSH_KEY',
    'client_secret',
  ]) {
    assert.ok(looksLikeCredential(k), k);
  }
  for (const k of [
    'LANG',
    'PATH',
    'inputTokens',
    'outputTokens',
    'idempotency_key',
    'idempotencyKey',
    'author',
    'keyboard',
    'name',
  ]) {
    assert.ok(!looksLikeCredential(k), k);
  }
});

it('redaction reaches nested objects, arrays and JSON text, and keeps secret names', () => {
  const input = {
    env: { OPENAI_API_KEY: 'sk-1', LANG: 'C' },
    list: [{ token: 'abc' }],
    arguments: JSON.stringify({ env: { GH_TOKEN: 'ghp_x' }, prompt: 'hi' }),
    secretEnv: { ANTHROPIC_API_KEY: 'anthropic' },
    usage: { inputTokens: 12 },
  };
  const out = redactCredentials(input);
  assert.deepEqual(out.env, { OPENAI_API_KEY: REDACTED, LANG: 'C' });
  assert.deepEqual(out.list, [{ token: REDACTED }]);
  assert.deepEqual(JSON.parse(out.arguments), { env: { GH_TOKEN: REDACTED }, prompt: 'hi' });
  assert.deepEqual(out.secretEnv, { ANTHROPIC_API_KEY: 'anthropic' });
  assert.deepEqual(out.usage, { inputTokens: 12 });
  // The input is left as it was.
  assert.equal(input.env.OPENAI_API_KEY, 'sk-1');
});

it('known secret values are scrubbed wherever they appear; short values are left alone', () => {
  const secrets = new Map([
    ['anthropic', 'sk-ant-0123456789'],
    ['pin', '1234'],
  ]);
  const out = scrubValues(
    { text: 'key=sk-ant-0123456789 pin 1234', nested: ['x sk-ant-0123456789'] },
    secrets,
  );
  assert.deepEqual(out, { text: 'key=[secret:anthropic] pin 1234', nested: ['x [secret:anthropic]'] });
});
