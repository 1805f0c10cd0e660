"""Knowledge sources: where documents come from (folders, git, web sites, Confluence) and how each is kept
in sync. A connector brings its source's documents into a folder of its own (its mirror) with their
metadata; `rag.sources.sync` indexes those folders and publishes a new index version."""
