STAGES = ["extract", "validate", "transform", "dedupe", "load"]
