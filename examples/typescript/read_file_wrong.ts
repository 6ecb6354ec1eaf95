// Deliberately wrong: ignores maxBytes. patchspec check must fail it.
import { serve } from "patchspec/executor";

import { readFile } from "./read_file_impl.js";

serve(
  { "workspace.read_file": (params, root, session) => readFile({ ...params, maxBytes: null }, root, session) },
  { name: "kit-example-wrong", version: "1.0.0" },
);
