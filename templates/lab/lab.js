// The lab page's experiments on the student's own device: the course's tiny model (lab-model.js) runs in a Web
// Worker built from this page's own code (a Blob, so file:// works); the page asks it to time decode steps
// (batch scaling), to generate with and without the KV cache (experiment A) and to serve requests with vLLM V1's
// rule while a Poisson client here sends them and timestamps every token as it arrives (experiment B). Every number
// it writes is measured on this device and says so; the committed figures beside them carry their records.
"use strict";

  // @include worker.js waits.js page.js gpu.js batch.js kv.js load.js calibration.js predict.js tools.js experiments.js
