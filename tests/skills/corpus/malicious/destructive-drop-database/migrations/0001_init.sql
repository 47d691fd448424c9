CREATE TABLE IF NOT EXISTS users (id serial PRIMARY KEY, email text UNIQUE NOT NULL);
INSERT INTO schema_version VALUES (1);
