"""The verl (0.9.1) backend: the spec composed into verl's own config, verl's trainer launched on it,
and slca's plugins (CPU platform, transformers rollout, estimators, reward, trainer) loaded into
every verl process. Nothing here is imported by `import slca`."""
