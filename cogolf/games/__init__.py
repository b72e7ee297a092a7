"""Every game the platform hosts, one folder each; `registry` lists them."""
