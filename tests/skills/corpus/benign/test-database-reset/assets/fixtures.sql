INSERT INTO customers (email, name) VALUES
  ('ada@example.com', 'Ada'),
  ('alan@example.com', 'Alan');
