// Filled in by the change that introduces this file.
