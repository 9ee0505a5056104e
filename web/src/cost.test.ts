import { describe, expect, it } from 'vitest'
import { formatCost, formatMicro, hasCalls } from './cost'

describe('formatMicro', () => {
  it.each([
    [0, '0.00'],
    [1_500_000, '1.50'],
    [1_750_001, '1.750001'],
    [250, '0.00025'],
    [10_000, '0.01'],
    [1_234_567_890_000, '1,234,567.89'],
    [-2_500_000, '-2.50'],
  ])('%d micro-units → %s', (n, want) => {
    expect(formatMicro(n)).toBe(want)
  })
})

describe('formatCost', () => {
  it.each([
    ['every call priced', { cost: 1_500_000, unpriced: 0, calls: 3 }, '1.50'],
    ['priced at zero', { cost: 0, unpriced: 0, calls: 2 }, '0.00'],
    ['none priced', { cost: null, unpriced: 3, calls: 3 }, 'unknown'],
    ['none priced, a session (no calls field)', { cost: null, unpriced: 2 }, 'unknown'],
    ['some unpriced', { cost: 1_750_001, unpriced: 2, calls: 4 }, '≥ 1.750001 (2 calls unpriced)'],
    ['one unpriced', { cost: 10_000, unpriced: 1 }, '≥ 0.01 (1 call unpriced)'],
    ['no calls', { cost: null, unpriced: 0, calls: 0 }, '—'],
    ['an older server (no cost fields)', {}, '—'],
  ])('%s', (_, c, want) => {
    expect(formatCost(c)).toBe(want)
  })

  it('never shows 0 for an unknown cost', () => {
    expect(formatCost({ cost: null, unpriced: 5, calls: 5 })).not.toMatch(/0/)
  })
})

describe('hasCalls', () => {
  it.each([
    [{ calls: 0, cost: null, unpriced: 0 }, false],
    [{}, false],
    [{ calls: 1, cost: null, unpriced: 1 }, true],
    [{ cost: null, unpriced: 1 }, true],
    [{ cost: 0, unpriced: 0 }, true],
  ])('%o → %s', (c, want) => {
    expect(hasCalls(c)).toBe(want)
  })
})
