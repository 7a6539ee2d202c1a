import { describe, it, before, after, beforeEach, afterEach } from 'node:test';
describe('skipped', { skip: 'no pg' }, () => { console.log('suite fn ran'); it('x', () => { console.log('test ran'); }); });
describe('hooks', () => { before(() => console.log('before')); beforeEach(() => console.log('beforeEach')); afterEach(() => console.log('afterEach')); after(() => console.log('after')); it('a', () => {}); describe('inner', () => { it('b', () => {}); }); });
