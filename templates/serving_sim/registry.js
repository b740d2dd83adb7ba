  // ---- registry.py: the components by name --------------------------------------------------------------------
  const REGISTRIES = {scheduler: {}, kv: {}, step_cost: {}};
  function register(kind, name, cls) {
    if (REGISTRIES[kind][name]) throw new Error(`${kind} ${JSON.stringify(name)} is registered twice`);
    cls.registeredName = name;
    REGISTRIES[kind][name] = cls;
    return cls;
  }
  function lookup(kind, name) {
    const table = REGISTRIES[kind];
    if (!table[name]) throw new Error(`${kind} must be one of ${Object.keys(table).join(", ")}, not ${JSON.stringify(name)}`);
    return table[name];
  }
