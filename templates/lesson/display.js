
  // ---- display.py --------------------------------------------------------------------------
  const DECIMALS = {int: 0, f1: 1, f2: 2, f3: 3};
  const FORMATTERS = {};  // one Intl.NumberFormat per format: toLocaleString builds a new one on every call
  function formatNumber(v, fmt) {
    const d = DECIMALS[fmt];
    const scale = Math.pow(10, d);
    const r = Math.floor(v * scale + 0.5) / scale;
    FORMATTERS[fmt] = FORMATTERS[fmt] || new Intl.NumberFormat("en-US", {minimumFractionDigits: d, maximumFractionDigits: d});
    return FORMATTERS[fmt].format(r);
  }

  window.lessonMath = {readouts, tokenReadouts, loadReadouts, frontierRows, lanes, formatNumber, maxBatchByMemory,
    techniqueTable, techniqueFrontierRows,
    decodeStepSeconds, percentile, onBuildSettings, engineOf, simJob, simCell: (key) => simCells.get(key)};
  window.lessonViews = {};
