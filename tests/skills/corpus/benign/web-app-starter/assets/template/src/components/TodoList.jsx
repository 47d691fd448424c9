export default function TodoList({ items, onToggle }) {
  if (items.length === 0) return <p className="empty">Nothing yet.</p>;
  return (
    <ul>
      {items.map((i) => (
        <li key={i.id}>
          <label>
            <input type="checkbox" checked={i.done} onChange={() => onToggle(i.id)} />
            <span className={i.done ? 'done' : ''}>{i.text}</span>
          </label>
        </li>
      ))}
    </ul>
  );
}
