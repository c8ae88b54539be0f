-- Clicks from the browser: the web origins (`scheme://host[:port]`, as a browser sends them in
-- the Origin header) whose pages may post this experiment's clicks with no API key, the signed
-- interleaving token being the capability. NULL: clicks need an ingest key (the default).
ALTER TABLE experiments
    ADD COLUMN browser_click_origins TEXT[];
