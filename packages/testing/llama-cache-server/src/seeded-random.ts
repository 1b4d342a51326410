/**
 * A small deterministic random source (mulberry32), so a generated model is byte-identical for
 * the same seed on every machine and every run.
 */
export class SeededRandom {
  private state: number

  /** `seed` is any integer; only its low 32 bits are used. */
  constructor(seed: number) {
    this.state = seed >>> 0
  }

  /** A uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let value = this.state
    value = Math.imul(value ^ (value >>> 15), value | 1)
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61)
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296
  }

  /** A normally distributed float with mean 0 and the given standard deviation (Box-Muller). */
  normal(standardDeviation: number): number {
    // 1 - next() is in (0, 1], so the logarithm is finite.
    const radius = Math.sqrt(-2 * Math.log(1 - this.next()))
    return radius * Math.cos(2 * Math.PI * this.next()) * standardDeviation
  }
}
