import { useState } from 'react';
import TodoList from './components/TodoList.jsx';

export default function App() {
  const [items, setItems] = useState([]);
  const [text, setText] = useState('');
  const add = (e) => {
    e.preventDefault();
    if (!text.trim()) return;
    setItems([...items, { id: crypto.randomUUID(), text, done: false }]);
    setText('');
  };
  return (
    <main>
      <h1>APP_TITLE</h1>
      <form onSubmit={add}>
        <input value={text} onChange={(e) => setText(e.target.value)} aria-label="New item" />
        <button type="submit">Add</button>
      </form>
      <TodoList items={items} onToggle={(id) =>
        setItems(items.map((i) => (i.id === id ? { ...i, done: !i.done } : i)))} />
    </main>
  );
}
