declare const PARSED: unique symbol

/**
 * A config as a warmfold plugin's constructor declares it: the value its `Config` parser
 * returned. The brand exists only in types (nothing at run time carries it). It is what makes
 * `ctx.plugin(X, config)` check `config` against the plugin's *input* type: cordis's own
 * `plugin` overloads infer the config type from the argument itself, so an object literal with a
 * typo next to a valid key (`{ thresholdRation: 0.5, auto: true }`) was accepted. A constructor
 * that asks for `Parsed<T>` while `Config` returns plain `T` matches none of cordis's overloads,
 * only the one declared below, whose config parameter is fixed by the plugin and so gets
 * TypeScript's excess-property and type checks.
 */
export type Parsed<T> = T & { readonly [PARSED]: true }

/**
 * A class plugin with a typed config parser, as every warmfold plugin is: `static Config(input?)`
 * validates the input and returns the parsed config, and the constructor takes it as
 * {@link Parsed}.
 */
export interface TypedConfigPlugin<T> {
  Config: (config?: any) => T
  new (ctx: any, config: Parsed<T>): unknown
}

declare module '@cordisjs/core' {
  interface Context {
    /**
     * Mounts a warmfold plugin (any class plugin whose constructor takes a {@link Parsed}
     * config): `config` must be the plugin's config input type, so an unknown or mistyped key is
     * a compile error. Other plugins go through cordis's own overloads as before.
     */
    plugin<P extends TypedConfigPlugin<any>>(plugin: P, ...args: Parameters<P['Config']>): ForkScope<this>
  }
}
