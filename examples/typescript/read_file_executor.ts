// A patchspec executor for one tool, written with the kit.
import { serve } from "patchspec/executor";

import { readFile } from "./read_file_impl.js";

serve(
  { "workspace.read_file": readFile },
  { name: "kit-example-typescript", version: "1.0.0" },
);
